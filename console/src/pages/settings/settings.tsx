// Settings (decisions §17, flow 7): the organization, custom properties, funnel stages, sub-origins and users.
import { Page } from '../../ui/page.tsx';
import { OrganizationSection } from './organization.tsx';
import { PropertiesSection } from './properties.tsx';
import { SettingsNav } from './settings-nav.tsx';
import { StagesSection } from './stages.tsx';
import { SubOriginsSection } from './sub-origins.tsx';
import { UsersSection } from './users.tsx';

export function SettingsPage() {
  return (
    <Page title="Settings">
      <SettingsNav />
      <OrganizationSection />
      <PropertiesSection />
      <StagesSection />
      <SubOriginsSection />
      <UsersSection />
    </Page>
  );
}
