// Developers (decisions §17, flow 6; Stripe's dashboard is the model): API keys and webhook endpoints.

import { Page } from '../../ui/page.tsx';
import { ApiKeysSection } from './api-keys.tsx';
import { WebhookEndpointsSection } from './webhook-endpoints.tsx';

export function DevelopersPage() {
  return (
    <Page title="Developers">
      <ApiKeysSection />
      <WebhookEndpointsSection />
    </Page>
  );
}
