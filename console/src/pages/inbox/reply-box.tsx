// The reply box (decisions §15): text or media by URL while the window is open; when it is closed, a template with
// its variables. The server decides: a 409 conversation_window_closed is shown as its sentence.
import type { Template } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { FormError, useApiForm } from '../../ui/form.tsx';

type ReplyBody =
  | { type: 'text'; text: string }
  | { type: 'image' | 'document'; media_url: string; caption?: string }
  | { type: 'template'; template_id: string; variables: Record<string, string> };

export function ReplyBox({ conversationId, open, known }: { conversationId: string; open: boolean; known: boolean }) {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [mediaUrl, setMediaUrl] = useState('');
  const form = useApiForm({
    mutationFn: (body: ReplyBody) =>
      api.request('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/messages`, {
        body,
        headers: { 'idempotency-key': crypto.randomUUID() },
      }),
    onSuccess: () => {
      setText('');
      setMediaUrl('');
      void queryClient.invalidateQueries({ queryKey: keys.conversations.detail(conversationId) });
    },
  });
  if (known && !open) return <TemplateReply conversationId={conversationId} />;
  return (
    <Form
      validationBehavior="aria"
      className="form"
      aria-label="Reply"
      onSubmit={(event) => {
        event.preventDefault();
        form.mutate(
          mediaUrl ? { type: 'image', media_url: mediaUrl, caption: text || undefined } : { type: 'text', text },
        );
      }}
    >
      <FormError message={form.shown.message} />
      <TextInput label="Reply" name="text" multiline value={text} onChange={setText} error={form.fieldError('text')} />
      <TextInput
        label="Image URL (optional)"
        name="media_url"
        type="url"
        value={mediaUrl}
        onChange={setMediaUrl}
        error={form.fieldError('media_url')}
      />
      <Button type="submit" className="primary" isDisabled={form.isPending || (!text && !mediaUrl)}>
        Send reply
      </Button>
    </Form>
  );
}

function TemplateReply({ conversationId }: { conversationId: string }) {
  const queryClient = useQueryClient();
  const [templateId, setTemplateId] = useState<string | null>(null);
  const [variables, setVariables] = useState<Record<string, string>>({});
  const templates = useQuery({
    queryKey: keys.templates.list({ status: 'APPROVED' }),
    queryFn: () => api.templates.list({ limit: 100 }),
  });
  const requirements = useQuery({
    queryKey: [...keys.templates.detail(templateId ?? ''), 'requirements'],
    queryFn: () => api.templates.sendRequirements(templateId!),
    enabled: templateId !== null,
  });
  const form = useApiForm({
    mutationFn: () =>
      api.request('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/messages`, {
        body: { type: 'template', template_id: templateId, variables },
        headers: { 'idempotency-key': crypto.randomUUID() },
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.conversations.detail(conversationId) }),
  });
  const approved = (templates.data?.items ?? []).filter((template: Template) => template.status === 'APPROVED');
  return (
    <Form
      validationBehavior="aria"
      className="form"
      aria-label="Send a template"
      onSubmit={(event) => {
        event.preventDefault();
        form.mutate();
      }}
    >
      <p className="notice" role="status">
        The 24-hour window is closed: the contact has not written in the last 24 hours. Only a template can be sent.
      </p>
      <FormError message={form.shown.message} />
      <SelectInput
        label="Template"
        name="template_id"
        value={templateId}
        onChange={setTemplateId}
        options={approved.map((template) => ({ id: template.id, label: `${template.name} (${template.language})` }))}
        error={form.fieldError('template_id')}
      />
      {(requirements.data?.variables ?? [])
        .filter((variable) => !requirements.data?.contact_resolvable_tokens.includes(variable.token))
        .map((variable) => (
          <TextInput
            key={variable.token}
            label={`Variable ${variable.token}`}
            name={variable.token}
            value={variables[variable.token] ?? ''}
            onChange={(value) => setVariables((current) => ({ ...current, [variable.token]: value }))}
            description={variable.example ? `For example: ${variable.example}` : undefined}
          />
        ))}
      <Button type="submit" className="primary" isDisabled={form.isPending || templateId === null}>
        Send template
      </Button>
    </Form>
  );
}
