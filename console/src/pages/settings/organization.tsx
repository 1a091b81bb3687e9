// The organization: its plan, trial, subscription and timezone (every time in the console is shown in it), and its
// messaging accounts' balance, prices and 24-hour limit (D169; the operator sets them).
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

export function OrganizationSection() {
  const time = useTime();
  const organization = useQuery({ queryKey: keys.organization, queryFn: () => api.me() });
  const accounts = useQuery({
    queryKey: keys.messagingAccounts.list(),
    queryFn: () => api.console.messagingAccounts.list(),
  });
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
          </dl>
        )}
      </QueryView>
      <h3>Messaging</h3>
      <QueryView
        query={accounts}
        isEmpty={(list) => list.items.length === 0}
        empty="No messaging account yet: the operator connects one."
      >
        {(list) => (
          <>
            {list.items.map((account) => (
              <dl key={account.id} className="fields">
                <dt>Account</dt>
                <dd>
                  {account.display_name ?? account.id}
                  {account.numbers.length > 0
                    ? ` (${account.numbers.map((n) => (n.display_name ? `${n.display_name} ${n.phone}` : n.phone)).join(', ')})`
                    : ''}
                </dd>
                <dt>Messaging balance</dt>
                <dd>{account.balance.toLocaleString('en', { maximumFractionDigits: 4 })}</dd>
                <dt>Price per message</dt>
                <dd>
                  Marketing {account.prices.MARKETING}, utility {account.prices.UTILITY}, authentication{' '}
                  {account.prices.AUTHENTICATION}
                </dd>
                <dt>24-hour limit</dt>
                <dd>{account.messaging_limit_24h.toLocaleString('en')} phones</dd>
              </dl>
            ))}
          </>
        )}
      </QueryView>
    </section>
  );
}
