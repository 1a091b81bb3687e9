// The reply box (decisions §15, §17 flow 2): the customer-service window's state in the organization's timezone; while
// it is open, a composer for text (Enter sends, Shift+Enter starts a new line) or media, a file from the computer
// (uploaded as it is picked, D294) or by URL; once it is closed, a
// template with its variables by name. One Idempotency-Key per body, so a retry after a lost answer never sends twice.
// The server is the one judge: its refusals are shown as sentences, a 422 at its field.
import { ApiError, type BodyOf, type Conversation } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useReducer, useRef, useState } from 'react';
import {
  Button,
  Disclosure,
  DisclosurePanel,
  FieldError,
  FileTrigger,
  Form,
  Heading,
  Label,
  Tab,
  TabList,
  TabPanel,
  Tabs,
  Text,
  TextArea,
  TextField,
} from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { showError } from '../../ui/errors.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { FormError, useApiForm } from '../../ui/form.tsx';
import { useIdempotencyKey } from '../../ui/idempotency.ts';
import { useSession, useTime } from '../../ui/session.tsx';
import { ErrorState, Loading } from '../../ui/states.tsx';
import {
  NO_TEMPLATE_VALUES,
  sendFieldsOf,
  TemplateFields,
  TemplatePreview,
  type TemplateValues,
} from '../../ui/template-fields.tsx';
import { useCannedSuggestions } from './canned-suggestions.tsx';
import { windowOpen } from './conversation-types.ts';
import { NoteBox } from './note-box.tsx';
import { SuggestReply } from './suggest-reply.tsx';
import { composerAreaProps, useCaretAfterInsert } from './suggestions.tsx';

type ReplyBody = BodyOf<'replyToConversation'>;
type MediaType = 'image' | 'video' | 'audio' | 'document';
type UploadedFile = Awaited<ReturnType<typeof api.files.upload>>;

/** A file's bytes in base64 (what `POST /v1/files` takes), read by the browser. */
function base64Of(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsDataURL(file);
  });
}

/** A size as people read it: 1.2 MB, 34 KB, 12 bytes. */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** D294: the media codes said of a file from the computer (the shared sentences speak of a URL). */
const UPLOAD_SENTENCES: Record<string, string> = {
  media_too_large: 'The file is too large to send',
  media_type_mismatch: 'The file is not of a kind that can be sent',
};

function uploadRefusal(error: unknown): string | undefined {
  if (!error) return undefined;
  const shown = showError(error);
  const field = shown.fields.data ?? shown.fields.mime_type ?? shown.fields.filename;
  if (field) return field;
  if (error instanceof ApiError && UPLOAD_SENTENCES[error.code]) {
    const reason = (error.detail as { reason?: unknown }).reason;
    return `${UPLOAD_SENTENCES[error.code]}${typeof reason === 'string' ? `: ${reason}` : ''}.`;
  }
  return shown.message;
}

function useSendReply(conversationId: string, onAccepted: () => void) {
  const queryClient = useQueryClient();
  const idempotency = useIdempotencyKey();
  const form = useApiForm({
    mutationFn: (body: ReplyBody) =>
      api.conversations.reply(conversationId, body, { idempotencyKey: idempotency.keyFor(body) }),
    onSuccess: () => {
      idempotency.accepted();
      onAccepted();
      // The conversation, its messages and the list (ordered by latest activity).
      void queryClient.invalidateQueries({ queryKey: keys.conversations.all });
    },
    onError: (error) => {
      // The window closed meanwhile: read the conversations again, so the template form takes the composer's place
      // and the list shows the window closed.
      if (error instanceof ApiError && error.code === 'conversation_window_closed')
        void queryClient.invalidateQueries({ queryKey: keys.conversations.all });
    },
  });
  return form;
}

/** Re-renders when the window's end passes, so an open window turns closed on screen without a reload. */
function useRerenderAt(iso: string | null) {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    if (!iso) return;
    const wait = Date.parse(iso) - Date.now();
    if (wait <= 0 || wait > 2 ** 31 - 1) return;
    const timer = setTimeout(tick, wait + 50);
    return () => clearTimeout(timer);
  }, [iso]);
}

export function ReplyBox({ conversation }: { conversation: Conversation }) {
  useRerenderAt(conversation.window_expires_at);
  return (
    // decisions §19: a private note is written beside the reply and clearly apart from it (D287).
    <Tabs className="composer-tabs">
      <TabList aria-label="Write" className="composer-tablist">
        <Tab id="reply">Reply</Tab>
        <Tab id="note">Private note</Tab>
      </TabList>
      <TabPanel id="reply">
        <ReplyPanel conversation={conversation} />
      </TabPanel>
      <TabPanel id="note" className="note-panel">
        <NoteBox conversationId={conversation.id} />
      </TabPanel>
    </Tabs>
  );
}

function ReplyPanel({ conversation }: { conversation: Conversation }) {
  const time = useTime();
  const open = windowOpen(conversation);
  // A refusal that ends the composer (the window closed meanwhile) stays visible above the template form.
  const [refusal, setRefusal] = useState<string | undefined>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a refusal belongs to one conversation
  useEffect(() => setRefusal(undefined), [conversation.id]);
  return (
    <section className="reply" aria-label="Reply">
      <p className={`window-state ${open ? 'window-open' : 'window-closed'}`}>
        {open
          ? `Window open until ${time(conversation.window_expires_at)}`
          : conversation.window_expires_at
            ? `Window closed since ${time(conversation.window_expires_at)}: only a template can be sent.`
            : 'Window closed: the contact has not written yet, so only a template can be sent.'}
      </p>
      {open ? (
        <Composer conversation={conversation} onWindowClosed={setRefusal} />
      ) : (
        <>
          <FormError message={refusal} />
          <TemplateReply conversationId={conversation.id} onSent={() => setRefusal(undefined)} />
        </>
      )}
    </section>
  );
}

function Composer({
  conversation,
  onWindowClosed,
}: {
  conversation: Conversation;
  onWindowClosed: (sentence: string) => void;
}) {
  const conversationId = conversation.id;
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const area = useRef<HTMLTextAreaElement>(null);
  const placeCaret = useCaretAfterInsert(area, text);
  const canned = useCannedSuggestions({
    text,
    caret,
    contact: conversation.contact,
    onInsert: (next) => {
      setText(next.text);
      setCaret(next.caret);
      placeCaret(next.caret);
    },
  });
  const [mediaUrl, setMediaUrl] = useState('');
  const [mediaType, setMediaType] = useState<MediaType>('image');
  const [filename, setFilename] = useState('');
  const [attachOpen, setAttachOpen] = useState(false);
  // D294: a file from the computer, uploaded as soon as it is picked; the reply refers to it by `file_id`.
  const [picked, setPicked] = useState<File | undefined>();
  const [file, setFile] = useState<UploadedFile | undefined>();
  const upload = useMutation({
    mutationFn: async (chosen: File) =>
      api.files.upload({
        filename: chosen.name,
        ...(chosen.type ? { mime_type: chosen.type } : {}),
        data: await base64Of(chosen),
      }),
    onSuccess: setFile,
  });
  const form = useSendReply(conversationId, () => {
    setText('');
    setMediaUrl('');
    setFilename('');
    setAttachOpen(false);
    setFile(undefined);
    setPicked(undefined);
    upload.reset();
  });
  const computerFileError = uploadRefusal(upload.error) ?? form.fieldError('file_id');
  // A refusal at the file's fields (a 422 at `media_url`) opens the panel that holds them.
  const fileError = form.fieldError('media_url') ?? form.fieldError('filename');
  useEffect(() => {
    if (fileError) setAttachOpen(true);
  }, [fileError]);
  useEffect(() => {
    if (form.error instanceof ApiError && form.error.code === 'conversation_window_closed')
      onWindowClosed(form.shown.message ?? '');
  }, [form.error, form.shown.message, onWindowClosed]);

  const bodyOf = (): ReplyBody | undefined => {
    if (file) {
      const body: Record<string, unknown> = { type: file.type, file_id: file.id };
      if (text && file.type !== 'audio') body.caption = text;
      return body as ReplyBody;
    }
    if (mediaUrl.trim()) {
      const body: Record<string, unknown> = { type: mediaType, media_url: mediaUrl.trim() };
      if (text && mediaType !== 'audio') body.caption = text;
      if (filename && mediaType === 'document') body.filename = filename;
      return body as ReplyBody;
    }
    return text.trim() ? { type: 'text', text } : undefined;
  };
  const send = () => {
    const body = bodyOf();
    if (body && !form.isPending) form.mutate(body);
  };
  return (
    <Form
      validationBehavior="aria"
      className="form composer"
      aria-label="Reply to the contact"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <FormError message={form.shown.message} />
      <TextField
        className="field"
        name="text"
        value={text}
        onChange={(value) => {
          setText(value);
          setCaret(area.current?.selectionStart ?? value.length);
        }}
        isInvalid={Boolean(form.fieldError('text') ?? form.fieldError('caption'))}
      >
        <Label>{mediaUrl || file ? 'Caption' : 'Message'}</Label>
        <TextArea ref={area} rows={3} data-composer="reply" {...composerAreaProps(canned, setCaret, send)} />
        <Text slot="description">Enter sends; Shift+Enter starts a new line; / offers canned responses.</Text>
        <FieldError>{form.fieldError('text') ?? form.fieldError('caption')}</FieldError>
      </TextField>
      {canned.list}
      <div className="field computer-file">
        {/* React Aria's FileTrigger: a real button that opens the system's file picker (keyboard and screen readers). */}
        <FileTrigger
          onSelect={(files) => {
            const chosen = files?.[0];
            if (!chosen) return;
            setFile(undefined);
            setPicked(chosen);
            upload.mutate(chosen);
          }}
        >
          <Button className="attach-computer" aria-describedby="computer-file-state">
            Attach a file from the computer
          </Button>
        </FileTrigger>
        <div id="computer-file-state" aria-live="polite">
          {upload.isPending && picked ? (
            <p className="muted">
              Uploading {picked.name} ({sizeLabel(picked.size)})…
            </p>
          ) : null}
          {file ? (
            <p className="attached-file">
              <span>
                Attached: {file.filename} · {sizeLabel(file.size)} · {file.mime_type}
              </span>{' '}
              <Button
                className="link"
                aria-label={`Remove ${file.filename}`}
                onPress={() => {
                  setFile(undefined);
                  setPicked(undefined);
                }}
              >
                Remove
              </Button>
            </p>
          ) : null}
        </div>
        {computerFileError ? (
          <p className="field-error" role="alert">
            {picked ? `${picked.name}: ` : ''}
            {computerFileError}
          </p>
        ) : null}
      </div>
      {/* A React Aria disclosure (D164): a named button that says whether it is expanded, and a panel it controls. */}
      <Disclosure className="attach" isExpanded={attachOpen} onExpandedChange={setAttachOpen}>
        <Heading level={3} className="attach-heading">
          <Button slot="trigger" className="attach-trigger">
            <span aria-hidden="true" className="attach-chevron">
              ▸
            </span>
            Attach a file by URL
          </Button>
        </Heading>
        <DisclosurePanel className="attach-panel">
          <TextInput
            label="File URL"
            name="media_url"
            type="url"
            value={mediaUrl}
            onChange={setMediaUrl}
            error={form.fieldError('media_url')}
          />
          <SelectInput
            label="File type"
            name="type"
            value={mediaType}
            onChange={(value) => setMediaType((value ?? 'image') as MediaType)}
            options={[
              { id: 'image', label: 'Image' },
              { id: 'video', label: 'Video' },
              { id: 'audio', label: 'Audio' },
              { id: 'document', label: 'Document' },
            ]}
          />
          {mediaType === 'document' ? (
            <TextInput
              label="File name (optional)"
              name="filename"
              value={filename}
              onChange={setFilename}
              error={form.fieldError('filename')}
            />
          ) : null}
        </DisclosurePanel>
      </Disclosure>
      <Button
        type="submit"
        className="primary"
        isDisabled={form.isPending || upload.isPending || bodyOf() === undefined}
      >
        {form.isPending ? 'Sending…' : 'Send reply'}
      </Button>
      <SuggestReply conversationId={conversationId} onDraft={setText} />
    </Form>
  );
}

function TemplateReply({ conversationId, onSent }: { conversationId: string; onSent: () => void }) {
  const { organization } = useSession();
  const [templateId, setTemplateId] = useState<string | null>(null);
  const [values, setValues] = useState<TemplateValues>(NO_TEMPLATE_VALUES);
  const templates = useQuery({
    queryKey: keys.templates.list({ status: ['APPROVED'], limit: 200 }),
    queryFn: () => api.templates.list({ status: ['APPROVED'], limit: 200 }),
  });
  const template = useQuery({
    queryKey: keys.templates.detail(templateId ?? ''),
    queryFn: () => api.templates.get(templateId!),
    enabled: templateId !== null,
  });
  const requirements = useQuery({
    queryKey: [...keys.templates.detail(templateId ?? ''), 'requirements'],
    queryFn: () => api.templates.sendRequirements(templateId!),
    enabled: templateId !== null,
  });
  const form = useSendReply(conversationId, () => {
    setTemplateId(null);
    setValues(NO_TEMPLATE_VALUES);
    onSent();
  });
  if (templates.isPending) return <Loading label="Loading the approved templates…" />;
  if (templates.isError) return <ErrorState error={templates.error} retry={() => void templates.refetch()} />;
  const approved = templates.data.items;
  if (approved.length === 0)
    return <p className="muted">No template is approved yet: an admin can create one under Templates.</p>;
  return (
    <Form
      validationBehavior="aria"
      className="form"
      aria-label="Send a template"
      onSubmit={(event) => {
        event.preventDefault();
        if (templateId === null) return;
        form.mutate({
          type: 'template',
          template_id: templateId,
          ...sendFieldsOf(values, requirements.data, organization.timezone),
        } as ReplyBody);
      }}
    >
      <FormError message={form.shown.message} />
      <SelectInput
        label="Template"
        name="template_id"
        value={templateId}
        onChange={(id) => {
          setTemplateId(id);
          setValues(NO_TEMPLATE_VALUES);
        }}
        placeholder="Choose an approved template"
        options={approved.map((t) => ({ id: t.id, label: `${t.name} (${t.language}, ${t.category})` }))}
        error={form.fieldError('template_id')}
      />
      {templateId === null ? null : requirements.isPending ? (
        <Loading label="Reading the template's variables…" />
      ) : requirements.isError ? (
        <ErrorState error={requirements.error} retry={() => void requirements.refetch()} />
      ) : (
        <>
          <TemplateFields
            requirements={requirements.data}
            values={values}
            onChange={setValues}
            errors={form}
            describe={(variable) =>
              variable.resolves_from
                ? `Filled from the contact's ${variable.resolves_from} when left empty.`
                : variable.example
                  ? `For example: ${variable.example}`
                  : undefined
            }
          />
          <TemplatePreview components={template.data?.components} values={values} />
        </>
      )}
      <Button type="submit" className="primary" isDisabled={form.isPending || templateId === null}>
        {form.isPending ? 'Sending…' : 'Send template'}
      </Button>
    </Form>
  );
}
