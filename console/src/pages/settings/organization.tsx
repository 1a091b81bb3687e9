// The organization: its plan, trial, subscription and timezone (every time in the console is shown in it).
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

export function OrganizationSection() {
  const time = useTime();
  const organization = useQuery({ queryKey: keys.organization, queryFn: () => api.me() });
  return (
    <section className="card" aria-labelledby="organization-title">
      <h2 id="organization-title">Organization</h2>
      <QueryView query={organization}>
        {(org) => (
          <dl className="fields">
            <dt>Name</dt>
            <dd>{org.name}</dd>
            <dt>Plan</dt>
            <dd>
              {org.plan}
              {org.trial ? ` (trial until ${time(org.trial_ends_at)})` : ''}
            </dd>
            <dt>Subscription</dt>
            <dd>{org.subscription_status}</dd>
            <dt>Timezone</dt>
            <dd>{org.timezone}</dd>
            <dt>Language</dt>
            <dd>{org.language}</dd>
            {'messaging_balance' in org ? (
              <>
                <dt>Messaging balance</dt>
                <dd>{String((org as { messaging_balance: unknown }).messaging_balance)}</dd>
              </>
            ) : null}
          </dl>
        )}
      </QueryView>
    </section>
  );
}
