// Settings → Canned responses (decisions §19, admins; D276): the organization's ready answers, found by the start of
// their short code or their text, created and edited in one form (409 duplicate at the short code, 422s at their
// fields), deleted after a confirmation. The inbox offers them after `/` in the reply box, filled for the contact.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Button, Input, Label, SearchField } from 'react-aria-components';
import { useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { showError } from '../../ui/errors.ts';
import { TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { QueryView } from '../../ui/states.tsx';
import { SettingsNav } from './settings-nav.tsx';
import type { CannedResponse } from './team-api.ts';

export function CannedResponsesPage() {
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const list = useQuery({
    queryKey: keys.cannedResponses.list({ q }),
    queryFn: () => api.cannedResponses.list(q ? { q } : {}),
  });
  const [editing, setEditing] = useState<CannedResponse | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // A new key after each save empties the form for the next one.
  const [saves, setSaves] = useState(0);
  const formRef = useRef<HTMLElement>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.cannedResponses.all });
  const search = (value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set('q', value);
    else next.delete('q');
    setParams(next, { replace: true });
  };
  const remove = useMutation({
    mutationFn: (response: CannedResponse) => api.cannedResponses.delete(response.id),
    onSuccess: (_data, response) => {
      if (editing?.id === response.id) setEditing(null);
      setNotice(`/${response.short_code} deleted.`);
      refresh();
    },
  });

  const columns: ColumnDef<CannedResponse>[] = [
    { id: 'short_code', name: 'Short code', isRowHeader: true, render: (item) => <code>/{item.short_code}</code> },
    { id: 'text', name: 'Text', render: (item) => <span className="canned-text">{item.text}</span> },
    {
      id: 'actions',
      name: 'Actions',
      render: (item) => (
        <span className="actions">
          <Button
            aria-label={`Edit /${item.short_code}`}
            onPress={() => {
              setNotice(null);
              setEditing(item);
              requestAnimationFrame(() => formRef.current?.querySelector('input')?.focus());
            }}
          >
            Edit
          </Button>
          <ConfirmButton
            label={`Delete /${item.short_code}`}
            title={`Delete /${item.short_code}?`}
            confirmLabel="Delete canned response"
            onConfirm={() => remove.mutate(item)}
          >
            People will no longer find it in the reply box.
          </ConfirmButton>
        </span>
      ),
    },
  ];

  return (
    <Page title="Canned responses">
      <SettingsNav />
      <section className="card" aria-labelledby="canned-title">
        <h2 id="canned-title">Canned responses</h2>
        <search className="filters" aria-label="Find canned responses">
          <SearchField className="field search" defaultValue={q} onSubmit={search} onClear={() => search('')}>
            <Label>Search</Label>
            <Input placeholder="Short code or text" />
          </SearchField>
        </search>
        {notice ? <p role="status">{notice}</p> : null}
        <FormError message={remove.error ? showError(remove.error).message : undefined} />
        <QueryView query={list}>
          {(data) => (
            <DataTable
              label="Canned responses"
              columns={columns}
              items={data.items}
              rowKey={(item) => item.id}
              empty={q ? 'No canned response matches.' : 'No canned responses yet.'}
            />
          )}
        </QueryView>
      </section>
      <section className="card" aria-labelledby="canned-form-title" ref={formRef}>
        <h2 id="canned-form-title">{editing ? `Edit /${editing.short_code}` : 'New canned response'}</h2>
        <CannedResponseForm
          key={`${editing?.id ?? 'new'}-${saves}`}
          response={editing}
          onSaved={(saved, created) => {
            setEditing(null);
            setSaves((count) => count + 1);
            setNotice(created ? `/${saved.short_code} created.` : `/${saved.short_code} saved.`);
            refresh();
          }}
          onCancel={() => setEditing(null)}
        />
      </section>
    </Page>
  );
}

function CannedResponseForm({
  response,
  onSaved,
  onCancel,
}: {
  response: CannedResponse | null;
  onSaved: (response: CannedResponse, created: boolean) => void;
  onCancel: () => void;
}) {
  const [shortCode, setShortCode] = useState(response?.short_code ?? '');
  const [text, setText] = useState(response?.text ?? '');
  const save = useApiForm({
    mutationFn: () => {
      const body = { short_code: shortCode, text };
      return response ? api.cannedResponses.update(response.id, body) : api.cannedResponses.create(body);
    },
    onSuccess: (saved) => onSaved(saved, response === null),
  });
  return (
    <ApiForm
      form={save}
      labelledBy="canned-form-title"
      submit={response ? 'Save canned response' : 'Create canned response'}
      onSubmit={() => save.mutate(undefined)}
      actions={response ? <Button onPress={onCancel}>Cancel</Button> : null}
    >
      <TextInput
        label="Short code"
        name="short_code"
        isRequired
        description="Up to 30 lowercase letters, digits, - and _: typing /code in the reply box offers it."
        value={shortCode}
        onChange={setShortCode}
      />
      <TextInput
        label="Text"
        name="text"
        isRequired
        multiline
        description="Up to 4,096 characters. {{contact.first_name}}, {{contact.last_name}} and {{contact.properties.KEY}} (KEY: a custom property's key) are filled from the contact when the response is inserted; a value the contact lacks is left empty."
        value={text}
        onChange={setText}
      />
    </ApiForm>
  );
}
