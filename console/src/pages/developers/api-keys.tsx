// API keys: created (with scopes and an expiry day, decisions §18) and shown once with a copy button, listed with
// prefix, scopes, expiry and last use, revoked after a confirmation.
import { type ApiKeyScope, apiKeyScopes, type BodyOf } from '@crm-messaging/sdk';
import type { ApiKey, CreatedApiKey } from '@crm-messaging/sdk/console';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { showError } from '../../ui/errors.ts';
import { CheckboxesInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { ShownOnce } from '../../ui/secret.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { zonedToUtc } from '../../ui/time.ts';

export function ApiKeysSection() {
  const time = useTime();
  const { organization } = useSession();
  const [scopes, setScopes] = useState<ApiKeyScope[]>([]);
  const [expiresOn, setExpiresOn] = useState('');
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const list = useQuery({ queryKey: keys.apiKeys.list(), queryFn: () => api.console.apiKeys.list() });
  const create = useApiForm({
    mutationFn: (body: BodyOf<'consoleCreateApiKey'>) => api.console.apiKeys.create(body),
    onSuccess: (key) => {
      setCreated(key);
      setName('');
      setScopes([]);
      setExpiresOn('');
      void queryClient.invalidateQueries({ queryKey: keys.apiKeys.all });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api.console.apiKeys.revoke(id),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.apiKeys.all }),
  });
  const columns: ColumnDef<ApiKey>[] = [
    { id: 'name', name: 'Name', isRowHeader: true, render: (k) => k.name ?? '—' },
    { id: 'prefix', name: 'Key', render: (k) => <code>{k.prefix}…</code> },
    {
      id: 'scopes',
      name: 'Scopes',
      render: (k) => (!k.scopes?.length || k.scopes.includes('*') ? 'All' : k.scopes.join(', ')),
    },
    { id: 'expires', name: 'Expires', render: (k) => (k.expires_at ? time(k.expires_at) : 'Never') },
    { id: 'used', name: 'Last used', render: (k) => (k.last_used_at ? time(k.last_used_at) : 'Never') },
    { id: 'created', name: 'Created', render: (k) => time(k.created_at) },
    {
      id: 'actions',
      name: 'Actions',
      render: (k) => (
        <ConfirmButton
          label={`Revoke ${k.name ?? k.prefix}`}
          title="Revoke this key?"
          confirmLabel="Revoke key"
          onConfirm={() => revoke.mutate(k.id)}
        >
          Requests with <code>{k.prefix}…</code> will be refused at once. This cannot be undone.
        </ConfirmButton>
      ),
    },
  ];
  return (
    <section className="card" aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      {created ? <ShownOnce label="API key" value={created.key} /> : null}
      <ApiForm
        form={create}
        inline
        label="Create an API key"
        submit="Create API key"
        onSubmit={() => {
          // The key works until the end of the chosen day in the organization's timezone.
          const expiresAt = expiresOn ? (zonedToUtc(`${expiresOn}T23:59`, organization.timezone) ?? expiresOn) : null;
          create.mutate({ name, ...(scopes.length > 0 ? { scopes } : {}), expires_at: expiresAt });
        }}
      >
        <TextInput label="Key name" name="name" isRequired value={name} onChange={setName} />
        <TextInput
          label="Expires on (optional)"
          name="expires_at"
          type="date"
          description={`At the end of that day, ${organization.timezone} time.`}
          value={expiresOn}
          onChange={setExpiresOn}
        />
        <CheckboxesInput
          className="field scopes"
          label="Scopes (none chosen: every operation)"
          name="scopes"
          value={scopes}
          onChange={(chosen) => setScopes(chosen as ApiKeyScope[])}
          options={apiKeyScopes.map((scope) => ({ id: scope, label: scope }))}
        />
      </ApiForm>
      <FormError message={revoke.error ? showError(revoke.error).message : undefined} />
      <QueryView query={list}>
        {(page) => (
          <DataTable label="API keys" columns={columns} items={page.items} rowKey={(k) => k.id} empty="No API keys." />
        )}
      </QueryView>
    </section>
  );
}
