// A contact's page (decisions §17, flow 3): its fields, custom properties, funnel stage, opt-out and conversations.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Switch } from 'react-aria-components';
import { useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { showError } from '../../ui/errors.ts';
import { FormError } from '../../ui/form.tsx';
import { useFunnelStages, useProperties } from '../../ui/lookups.ts';
import { Page } from '../../ui/page.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { contactLabel } from '../inbox/contact-name.tsx';
import { showValue } from './property-value.ts';

export function ContactPage() {
  const { contactId = '' } = useParams();
  const time = useTime();
  const queryClient = useQueryClient();
  const contact = useQuery({ queryKey: keys.contacts.detail(contactId), queryFn: () => api.contacts.get(contactId) });
  const properties = useProperties();
  const stages = useFunnelStages();
  const conversations = useQuery({
    queryKey: keys.conversations.list({ contact_id: contactId }),
    queryFn: () => api.conversations.list({ contact_id: contactId }),
  });
  const optOut = useMutation({
    mutationFn: (opted_out: boolean) => api.contacts.update(contactId, { opted_out }),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.contacts.detail(contactId), updated);
      void queryClient.invalidateQueries({ queryKey: keys.contacts.list() });
    },
  });

  return (
    <Page
      title={contact.data ? contactLabel(contact.data) : 'Contact'}
      actions={
        <Link className="button" href={`/contacts/${contactId}/edit`}>
          Edit contact
        </Link>
      }
    >
      <QueryView query={contact}>
        {(data) => (
          <>
            <div className="card">
              <h2>Fields</h2>
              <dl className="fields">
                <dt>First name</dt>
                <dd>{data.first_name ?? '—'}</dd>
                <dt>Last name</dt>
                <dd>{data.last_name ?? '—'}</dd>
                <dt>Email</dt>
                <dd>{data.email ?? '—'}</dd>
                <dt>Phone</dt>
                <dd>{data.phone ?? '—'}</dd>
                <dt>Country</dt>
                <dd>{data.country ?? '—'}</dd>
                <dt>City</dt>
                <dd>{data.city ?? '—'}</dd>
                <dt>Origin</dt>
                <dd>{data.origin ?? '—'}</dd>
                <dt>Funnel stage</dt>
                <dd>{stages.data?.items.find((stage) => stage.id === data.funnel_stage_id)?.name ?? '—'}</dd>
                <dt>Messaging</dt>
                <dd>{data.messaging_status}</dd>
                <dt>Created</dt>
                <dd>{time(data.created_at)}</dd>
              </dl>
              <FormError message={optOut.error ? showError(optOut.error).message : undefined} />
              <Switch
                isSelected={data.opted_out}
                onChange={(value) => optOut.mutate(value)}
                isDisabled={optOut.isPending}
              >
                <span className="switch-indicator" aria-hidden="true" /> Opted out of marketing
                {data.opted_out_at ? ` (since ${time(data.opted_out_at)})` : ''}
              </Switch>
            </div>
            <div className="card">
              <h2>Custom properties</h2>
              <QueryView
                query={properties}
                isEmpty={(list) => list.items.filter((p) => !p.archived_at).length === 0}
                empty="No custom properties yet: admins add them in Settings."
              >
                {(list) => (
                  <dl className="fields">
                    {list.items
                      .filter((property) => !property.archived_at)
                      .map((property) => (
                        <div key={property.id} className="contents">
                          <dt>{property.label}</dt>
                          <dd>{showValue(property, data.properties?.[property.key])}</dd>
                        </div>
                      ))}
                  </dl>
                )}
              </QueryView>
            </div>
            <div className="card">
              <h2>Conversations</h2>
              <QueryView
                query={conversations}
                isEmpty={(page) => page.items.length === 0}
                empty="No conversation with this contact yet."
              >
                {(page) => (
                  <ul>
                    {page.items.map((conversation) => (
                      <li key={conversation.id}>
                        <Link href={`/inbox/${conversation.id}`}>
                          Conversation, last message {time(conversation.last_message_at)}
                        </Link>
                      </li>
                    ))}
                  </ul>
                )}
              </QueryView>
            </div>
          </>
        )}
      </QueryView>
    </Page>
  );
}
