// The sandbox messaging platform (decisions §9): the built-in simulator behind the same port as the Cloud API.
// Whatever it has to say later (reviews, delivery reports, inbound messages) it says as a platform-shaped, SIGNED
// webhook handed to the service's own inbound processor, so its events take exactly the real platform's path.
// Its memory (submitted templates, name cool-downs, accepted messages) lives in the process and is lost on restart.

import { randomInt } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { classifyPlatformError } from '../cloud/platform-errors.ts';
import { buildSignedWebhook, type WebhookPayload } from '../cloud/webhook-builder.ts';
import { cloudInbound } from '../cloud/webhook-parser.ts';
import type { PlatformEventOf } from '../inbound.ts';
import type {
  FreeformMessage,
  MediaDownload,
  MessagingPlatform,
  PlatformEvent,
  ReadReceipt,
  SendResult,
  SubmitTemplateResult,
  TemplateDeletion,
  TemplateMessage,
  TemplateSubmission,
} from '../platform.ts';

/** decisions §15: the customer-service window, and the platform's refusal of a free-form message outside it. */
const WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOW_CLOSED_CODE = 131047;

/** Where the sandbox delivers its webhooks: the same function the HTTP route calls with the raw bytes. */
export interface WebhookSink {
  appSecret: string;
  deliver(rawBody: Buffer, signature: string): Promise<void>;
  /** Webhook entries name the business account; a send names only the number, so the service says whose it is. */
  businessAccountOf(phoneNumberId: string): Promise<string | undefined>;
  /**
   * decisions §15: when the phone last wrote to the number (the platform's memory of its customer-service window).
   * The service recorded every inbound message this sandbox delivered, in whichever process delivered it.
   */
  lastInboundAt(phoneNumberId: string, phone: string): Promise<Date | undefined>;
  /**
   * decisions §15: where the sandbox gets an inbound file's bytes (its `media_url`) when the service asks for them:
   * the service's own media fetcher, so the same address policy applies.
   */
  fetchMedia?(url: string): Promise<MediaDownload>;
}

/** An inbound file as the sandbox holds it: where its bytes are, and the type it was announced with. */
export interface SandboxMediaFile {
  url: string;
  mimeType: string;
}

// The sandbox keeps no files: its media id carries the file's URL and type (base64url JSON), so any process with a
// sandbox, before or after a restart, can answer a download.
const MEDIA_ID_PREFIX = 'sbxmedia.';

export function sandboxMediaId(file: SandboxMediaFile): string {
  return `${MEDIA_ID_PREFIX}${Buffer.from(JSON.stringify({ u: file.url, t: file.mimeType })).toString('base64url')}`;
}

export function readSandboxMediaId(id: string): SandboxMediaFile | undefined {
  if (!id.startsWith(MEDIA_ID_PREFIX)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(id.slice(MEDIA_ID_PREFIX.length), 'base64url').toString('utf8')) as {
      u?: unknown;
      t?: unknown;
    };
    return typeof parsed.u === 'string' && typeof parsed.t === 'string'
      ? { url: parsed.u, mimeType: parsed.t }
      : undefined;
  } catch {
    return undefined;
  }
}

export interface SandboxOptions {
  clock: Clock;
  /** decisions §9: a deleted template's name is refused for this long (default 60 s). */
  nameCooldownMs: number;
  /** Approve every submitted template after this many ms (off when undefined). */
  autoReviewMs?: number | undefined;
  /** Deliver, then read, every accepted message after this many ms each (off when undefined). */
  autoReportsMs?: number | undefined;
  /** Failures of timer-driven deliveries are logged, never thrown. */
  onError?: (error: unknown, what: string) => void;
  /**
   * Accepted messages kept for the operator's sandbox controls (default 100,000, the oldest leaves first). A process
   * without the HTTP API (`crm worker`) has no controls and keeps none: 100,000 entries are ≈ 30 MB of its heap.
   */
  rememberMessages?: number | undefined;
}

export interface SandboxMessage {
  businessAccountId: string;
  phoneNumberId: string;
  to: string;
  /** D294: the uploaded file a media message was sent with (its bytes as the contact would get them). */
  media?: SandboxUpload;
}

/** D294: a file given to the sandbox by `uploadMedia`. */
export interface SandboxUpload {
  phoneNumberId: string;
  mimeType: string;
  filename: string;
  bytes: Buffer;
}

/** D294: uploads kept in memory (the real platform keeps them 30 days); the oldest leaves first. */
const MAX_UPLOADS = 100;

export interface SandboxPlatform extends MessagingPlatform {
  readonly name: 'sandbox';
  connect(sink: WebhookSink): void;
  /** Delivers the events as one signed webhook through the connected sink; answers the payload it sent. */
  deliver(events: PlatformEvent[]): Promise<WebhookPayload>;
  /** A message this sandbox accepted (for status reports about messages the database does not know). */
  acceptedMessage(platformMessageId: string): SandboxMessage | undefined;
  /** D294: a file given with `uploadMedia`, by the media id it answered. */
  uploadedMedia(platformMediaId: string): SandboxUpload | undefined;
  newMessageId(): string;
  /** The read receipts the service sent, oldest first (the operator's view of what the contact's phone shows). */
  readReceipts(): ReadReceipt[];
  /** Cancels pending timers; deliveries after close are dropped. */
  close(): void;
}

/** decisions §9 magic numbers: the last four digits decide the outcome of a send. */
export const SANDBOX_NOT_ON_NETWORK_SUFFIX = '0404';
export const SANDBOX_GENERIC_ERROR_SUFFIX = '0500';

interface StoredTemplate {
  businessAccountId: string;
  name: string;
  language: string;
}

/**
 * D215: what the sandbox remembers of the messages it accepted serves status reports for messages the database does
 * not know (yet): a hand-off in flight, or one whose record a crash lost. A worker hands off at most 96 at a time;
 * 10,000 is far beyond that, at 2 MB (100,000 took 22 MB of an `npm start` process's heap under a large fan-out).
 */
const MAX_REMEMBERED_MESSAGES = 10_000;

export function createSandboxPlatform(options: SandboxOptions): SandboxPlatform {
  const templates = new Map<string, StoredTemplate>(); // by platform template id
  const cooldowns = new Map<string, number>(); // name key -> deleted at (ms)
  const messages = new Map<string, SandboxMessage>();
  const uploads = new Map<string, SandboxUpload>();
  const receipts: ReadReceipt[] = [];
  const timers = new Set<NodeJS.Timeout>();
  // Template webhooks are ordered by their entry time (whole seconds); each template's next one is strictly later,
  // so that a quick APPROVED, PAUSED, APPROVED through the operator controls is not read as a replay or out of order.
  const lastTemplateSecond = new Map<string, number>();
  let sink: WebhookSink | undefined;
  let closed = false;

  const nameKey = (waba: string, name: string, language: string) => `${waba}\u0000${name}\u0000${language}`;
  const report = (error: unknown, what: string) => options.onError?.(error, what);

  function later(ms: number, what: string, task: () => Promise<unknown>): void {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) task().catch((error: unknown) => report(error, what));
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  function coolingDown(waba: string, name: string, language: string): number | undefined {
    const now = options.clock.now().getTime();
    for (const key of [nameKey(waba, name, language), nameKey(waba, name, '*')]) {
      const deletedAt = cooldowns.get(key);
      if (deletedAt === undefined) continue;
      const remaining = deletedAt + options.nameCooldownMs - now;
      if (remaining > 0) return remaining;
      cooldowns.delete(key);
    }
    return undefined;
  }

  function entryTime(events: PlatformEvent[]): Date {
    let seconds = Math.floor(options.clock.now().getTime() / 1000);
    const templateIds = events
      .filter((event) => event.kind === 'template_status' || event.kind === 'template_category')
      .map((event) => event.platformTemplateId);
    for (const id of templateIds) seconds = Math.max(seconds, (lastTemplateSecond.get(id) ?? -1) + 1);
    for (const id of templateIds) lastTemplateSecond.set(id, seconds);
    return new Date(seconds * 1000);
  }

  async function deliver(events: PlatformEvent[]): Promise<WebhookPayload> {
    if (!sink) throw new Error('sandbox platform is not connected to the inbound processor');
    const time = entryTime(events);
    const { rawBody, signature } = buildSignedWebhook(events, sink.appSecret, { time });
    await sink.deliver(rawBody, signature);
    return JSON.parse(rawBody.toString('utf8')) as WebhookPayload;
  }

  const newMessageId = () => `wamid.SANDBOX${Date.now().toString(36).toUpperCase()}${randomDigits(12)}`;

  async function submitTemplate(submission: TemplateSubmission): Promise<SubmitTemplateResult> {
    const { businessAccountId: waba, name, language } = submission;
    const remaining = coolingDown(waba, name, language);
    if (remaining !== undefined) {
      // The real platform's wording for a name whose deletion is still in progress (error 100, subcode 2388023).
      const seconds = Math.ceil(remaining / 1000);
      return {
        ok: false,
        code: 100,
        reason: `New ${language} content can't be added while the existing ${language} content is being deleted. Try again in ${seconds} seconds or use a different name.`,
      };
    }
    const taken = [...templates.values()].some(
      (template) => template.businessAccountId === waba && template.name === name && template.language === language,
    );
    if (taken) return { ok: false, code: 100, reason: `Content in ${language} already exists for template ${name}.` };
    // 15 digits, like the platform's ids: they travel as JSON numbers, so they must stay below 2^53.
    const platformTemplateId = randomDigits(15);
    templates.set(platformTemplateId, { businessAccountId: waba, name, language });
    if (options.autoReviewMs !== undefined) {
      later(options.autoReviewMs, 'sandbox auto review', async () => {
        if (!templates.has(platformTemplateId)) return; // deleted meanwhile
        await deliver([
          {
            kind: 'template_status',
            businessAccountId: waba,
            platformTemplateId,
            templateName: name,
            language,
            event: 'APPROVED',
          },
        ]);
      });
    }
    return { ok: true, platformTemplateId, status: 'PENDING', category: submission.category };
  }

  async function deleteTemplate(deletion: TemplateDeletion): Promise<{ ok: boolean; reason?: string }> {
    const now = options.clock.now().getTime();
    const matching = [...templates].filter(
      ([id, template]) =>
        template.businessAccountId === deletion.businessAccountId &&
        template.name === deletion.name &&
        (deletion.platformTemplateId === '' || id === deletion.platformTemplateId),
    );
    for (const [id, template] of matching) {
      templates.delete(id);
      cooldowns.set(nameKey(template.businessAccountId, template.name, template.language), now);
    }
    // Unknown here (submitted before a restart): cool the name down in every language, as a delete by name does.
    if (matching.length === 0) cooldowns.set(nameKey(deletion.businessAccountId, deletion.name, '*'), now);
    return { ok: true };
  }

  // A number's business account never changes: asked once per number, not once per message.
  const accountOfNumber = new Map<string, string>();
  async function businessAccountOf(phoneNumberId: string): Promise<string> {
    const known = accountOfNumber.get(phoneNumberId);
    if (known !== undefined) return known;
    const found = (await sink?.businessAccountOf(phoneNumberId)) ?? '';
    if (found !== '') accountOfNumber.set(phoneNumberId, found);
    return found;
  }

  /** decisions §9 magic numbers: the same refusals for templates and free-form messages. */
  function magicFailure(to: string): SendResult | undefined {
    const digits = to.replace(/\D/g, '');
    if (digits.endsWith(SANDBOX_NOT_ON_NETWORK_SUFFIX)) {
      return { ok: false, reason: 'not_on_network', retryable: false, code: 131026, message: 'Message undeliverable' };
    }
    if (digits.endsWith(SANDBOX_GENERIC_ERROR_SUFFIX)) {
      // Not retryable: the sandbox would fail the same way every time.
      const { reason } = classifyPlatformError(131000, 400);
      return { ok: false, reason, retryable: false, code: 131000, message: 'Something went wrong' };
    }
    return undefined;
  }

  type Accepted = { phoneNumberId: string; to: string; callbackData?: string | undefined };

  /** A status report about an accepted message, carrying its callback reference back like the real platform. */
  const statusOf = (
    waba: string,
    message: Accepted,
    platformMessageId: string,
    status: 'delivered' | 'read' | 'failed',
    error?: PlatformEventOf<'message_status'>['error'],
  ): PlatformEvent => ({
    kind: 'message_status',
    businessAccountId: waba,
    phoneNumberId: message.phoneNumberId,
    platformMessageId,
    status,
    recipient: message.to,
    timestamp: options.clock.now(),
    ...(message.callbackData !== undefined ? { callbackData: message.callbackData } : {}),
    ...(error ? { error } : {}),
  });

  /** Takes a message: remembers it and, with SANDBOX_AUTO_REPORTS_MS, delivers and then reads it. */
  async function accept(message: Accepted): Promise<{ platformMessageId: string; waba: string }> {
    const platformMessageId = newMessageId();
    const waba = await businessAccountOf(message.phoneNumberId);
    remember(platformMessageId, { businessAccountId: waba, phoneNumberId: message.phoneNumberId, to: message.to });
    return { platformMessageId, waba };
  }

  function autoReport(waba: string, message: Accepted, platformMessageId: string): void {
    if (options.autoReportsMs === undefined || waba === '') return;
    const reportMs = options.autoReportsMs;
    later(reportMs, 'sandbox auto report', async () => {
      await deliver([statusOf(waba, message, platformMessageId, 'delivered')]);
      later(reportMs, 'sandbox auto report', () => deliver([statusOf(waba, message, platformMessageId, 'read')]));
    });
  }

  async function sendTemplate(message: TemplateMessage): Promise<SendResult> {
    const refused = magicFailure(message.to);
    if (refused) return refused;
    const { platformMessageId, waba } = await accept(message);
    autoReport(waba, message, platformMessageId);
    return { ok: true, platformMessageId };
  }

  /**
   * decisions §15: like the real platform, a free-form message to a phone that has not written to the number in
   * the last 24 hours is taken, then reported failed with error 131047; the magic numbers fail as for templates.
   */
  async function sendMessage(message: FreeformMessage): Promise<SendResult> {
    const refused = magicFailure(message.to);
    if (refused) return refused;
    // D294: a media id must be one this sandbox was given, for this number (the platform's error 131053).
    const media = 'mediaId' in message.body ? uploads.get(message.body.mediaId) : undefined;
    if ('mediaId' in message.body && media?.phoneNumberId !== message.phoneNumberId) {
      return { ok: false, reason: 'platform_error', retryable: false, code: 131053, message: 'Media upload error' };
    }
    const lastInbound = await sink?.lastInboundAt(message.phoneNumberId, message.to);
    const { platformMessageId, waba } = await accept(message);
    if (media) {
      const accepted = messages.get(platformMessageId);
      if (accepted) accepted.media = media;
    }
    const open = lastInbound !== undefined && lastInbound.getTime() + WINDOW_MS > options.clock.now().getTime();
    if (!open) {
      const error = {
        code: WINDOW_CLOSED_CODE,
        title: 'Re-engagement message',
        message:
          'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
        reason: 'window_closed' as const,
      };
      later(0, 'sandbox window refusal', () => deliver([statusOf(waba, message, platformMessageId, 'failed', error)]));
    } else {
      autoReport(waba, message, platformMessageId);
    }
    return { ok: true, platformMessageId };
  }

  const rememberAtMost = options.rememberMessages ?? MAX_REMEMBERED_MESSAGES;
  function remember(id: string, message: SandboxMessage): void {
    if (rememberAtMost <= 0) return;
    if (messages.size >= rememberAtMost) {
      const oldest = messages.keys().next().value;
      if (oldest !== undefined) messages.delete(oldest);
    }
    messages.set(id, message);
  }

  return {
    name: 'sandbox',
    inbound: cloudInbound,
    submitTemplate,
    deleteTemplate,
    sendTemplate,
    async markRead(receipt) {
      if (receipts.length >= 1000) receipts.shift();
      receipts.push(receipt);
      return { ok: true };
    },
    sendMessage,
    async uploadMedia(upload) {
      if (uploads.size >= MAX_UPLOADS) {
        const oldest = uploads.keys().next().value;
        if (oldest !== undefined) uploads.delete(oldest);
      }
      const id = randomDigits(16);
      uploads.set(id, {
        phoneNumberId: upload.phoneNumberId,
        mimeType: upload.mimeType,
        filename: upload.filename,
        bytes: upload.bytes,
      });
      return { ok: true, platformMediaId: id };
    },
    uploadedMedia: (id) => uploads.get(id),
    async downloadMedia(media) {
      const file = readSandboxMediaId(media.platformMediaId);
      if (!file) return { ok: false, reason: 'not_found', message: 'the sandbox has no such media' };
      if (!sink?.fetchMedia) return { ok: false, reason: 'unavailable', message: 'the sandbox cannot fetch media' };
      const download = await sink.fetchMedia(file.url);
      // Like the platform, the file is answered with the type it was announced with.
      return download.ok ? { ...download, mimeType: file.mimeType } : download;
    },
    readReceipts: () => [...receipts],
    connect(next) {
      sink = next;
    },
    deliver,
    acceptedMessage: (id) => messages.get(id),
    newMessageId,
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

function randomDigits(length: number): string {
  return `${randomInt(1, 10)}${Array.from({ length: length - 1 }, () => randomInt(0, 10)).join('')}`;
}
