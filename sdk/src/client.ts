// CrmClient: one method per operation of the public API, grouped by resource, typed from the OpenAPI document. Each
// method names its operation; the method and path come from the generated table (`operations.ts`), so a method
// cannot drift from the route. A new route: `npm run sdk:generate`, then a method here and its line in
// `methodOfOperation` (the typecheck and test/sdk/operations.test.ts fail until both exist).
import { type CallOptions, Transport, type TransportOptions } from './http.ts';
import { operationTable } from './operations.ts';
import { walk } from './pagination.ts';
import type { BodyOf, QueryOf, ResponseOf } from './types.ts';

export type ClientOptions = TransportOptions;

/** Options of an operation that takes an `Idempotency-Key` (a send, a retry, a reply): the key and the call's own options. */
export interface SendOptions extends CallOptions {
  /**
   * The same key within 24 hours returns the original broadcast (or reply) instead of sending again; a fresh UUID by
   * default.
   */
  idempotencyKey?: string;
}

/** Options of `request()`: a query, a body, and an `Idempotency-Key` where the operation takes one. */
export interface RawRequestOptions extends SendOptions {
  query?: Record<string, unknown>;
  body?: unknown;
}

/** An Idempotency-Key for every send unless the caller gives one, so a retried call never sends twice. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** An operation of the API (the document's `webhooks` are events we send, not operations to call). */
export type ApiOperationId = keyof typeof operationTable;
type Operation = { method: string; path: string; idempotencyKey?: boolean };
const table: Record<ApiOperationId, Operation> = operationTable;

const matchers = Object.values(table).map((operation) => ({
  operation,
  pattern: new RegExp(`^${operation.path.replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
}));

/** The operation `METHOD path` names, if the API has one (a query string or a full URL is fine). */
export function operationAt(method: string, url: string): Operation | undefined {
  const path = new URL(url, 'http://sdk.invalid').pathname;
  const upper = method.toUpperCase();
  return matchers.find((matcher) => matcher.operation.method === upper && matcher.pattern.test(path))?.operation;
}

/** The headers of a call, with an `Idempotency-Key` added where the operation takes one and none is given. */
function withIdempotencyKey(operation: Operation | undefined, options: SendOptions): Record<string, string> {
  const { headers = {}, idempotencyKey } = options;
  if (!operation?.idempotencyKey) return headers;
  if (idempotencyKey === undefined && Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key')) {
    return headers;
  }
  return { ...headers, 'idempotency-key': idempotencyKey ?? newIdempotencyKey() };
}

/** A file the API answers (a message's media): its bytes as a stream, never read whole by the SDK. */
export interface MediaFile {
  /** The file's type, e.g. `image/jpeg`. */
  contentType: string;
  /** Its size in bytes, when the server knows it. */
  contentLength: number | undefined;
  /** Its name, when it has one (a document's). */
  filename: string | undefined;
  /** The bytes as they arrive: read, pipe or cancel it. */
  body: ReadableStream<Uint8Array>;
  /** The whole HTTP response (headers, `blob()`, `arrayBuffer()` for a small file). */
  response: Response;
}

/** The name in `Content-Disposition` (`filename*=UTF-8''…` first, then `filename="…"`). */
function filenameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
  if (encoded) {
    try {
      return decodeURIComponent(encoded.trim());
    } catch {
      return undefined;
    }
  }
  return /filename="([^"]*)"/i.exec(disposition)?.[1];
}

export class CrmClient {
  readonly #http: Transport;

  constructor(options: ClientOptions) {
    this.#http = new Transport(options);
  }

  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  /**
   * A request to any path, for operations newer than this SDK. A POST to an operation that takes an
   * `Idempotency-Key` gets a fresh one unless `idempotencyKey` or the header is given.
   */
  request<T = unknown>(method: string, url: string, options: RawRequestOptions = {}): Promise<T> {
    const { idempotencyKey: _key, ...rest } = options;
    const headers = withIdempotencyKey(operationAt(method, url), options);
    return this.#http.request<T>(method, url, { ...rest, headers } as never);
  }

  /** Operation `id`'s path with its ids filled in (each encoded) in the order of its path. */
  #path(id: ApiOperationId, ids: string[]): string {
    let index = 0;
    return table[id].path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
  }

  /** Calls operation `id` with its path ids filled in. */
  #call<T>(id: ApiOperationId, ids: string[], options: RawRequestOptions = {}): Promise<T> {
    const operation = table[id];
    const url = this.#path(id, ids);
    const { idempotencyKey: _key, ...rest } = options;
    return this.#http.request<T>(operation.method, url, {
      ...rest,
      headers: withIdempotencyKey(operation, options),
    } as never);
  }

  /** Like #call, for an operation that answers a file: the response's stream, unread, with its type and size. */
  async #stream(id: ApiOperationId, ids: string[], options: CallOptions = {}): Promise<MediaFile> {
    const response = await this.#http.stream(table[id].method, this.#path(id, ids), options as never);
    const length = response.headers.get('content-length');
    const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    return {
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
      filename: filenameOf(response.headers.get('content-disposition')),
      body,
      response,
    };
  }

  /** GET /v1/me: the organization behind the key. */
  me(options?: CallOptions): Promise<ResponseOf<'getMe'>> {
    return this.#call('getMe', [], options);
  }

  readonly contacts = {
    list: (query: QueryOf<'listContacts'> = {}, options?: CallOptions): Promise<ResponseOf<'listContacts'>> =>
      this.#call('listContacts', [], { ...options, query }),
    /** Every contact matching `query`, page after page. */
    iterate: (query: QueryOf<'listContacts'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listContacts'>) => this.contacts.list(page, options), query),
    create: (body: BodyOf<'createContact'>, options?: CallOptions): Promise<ResponseOf<'createContact'>> =>
      this.#call('createContact', [], { ...options, body }),
    /** Up to 100 contacts created or updated by `match_on`, all or nothing (decisions: contacts in bulk). */
    batchUpsert: (
      body: BodyOf<'batchUpsertContacts'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'batchUpsertContacts'>> => this.#call('batchUpsertContacts', [], { ...options, body }),
    get: (contactId: string, options?: CallOptions): Promise<ResponseOf<'getContact'>> =>
      this.#call('getContact', [contactId], options),
    update: (
      contactId: string,
      body: BodyOf<'updateContact'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateContact'>> => this.#call('updateContact', [contactId], { ...options, body }),
    delete: (contactId: string, options?: CallOptions): Promise<void> =>
      this.#call('deleteContact', [contactId], options),
  };

  readonly properties = {
    list: (options?: CallOptions): Promise<ResponseOf<'listProperties'>> => this.#call('listProperties', [], options),
    create: (body: BodyOf<'createProperty'>, options?: CallOptions): Promise<ResponseOf<'createProperty'>> =>
      this.#call('createProperty', [], { ...options, body }),
    get: (propertyId: string, options?: CallOptions): Promise<ResponseOf<'getProperty'>> =>
      this.#call('getProperty', [propertyId], options),
    update: (
      propertyId: string,
      body: BodyOf<'updateProperty'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateProperty'>> => this.#call('updateProperty', [propertyId], { ...options, body }),
    delete: (propertyId: string, options?: CallOptions): Promise<void> =>
      this.#call('deleteProperty', [propertyId], options),
    reorder: (body: BodyOf<'reorderProperties'>, options?: CallOptions): Promise<ResponseOf<'reorderProperties'>> =>
      this.#call('reorderProperties', [], { ...options, body }),
  };

  readonly funnelStages = {
    list: (options?: CallOptions): Promise<ResponseOf<'listFunnelStages'>> =>
      this.#call('listFunnelStages', [], options),
    create: (body: BodyOf<'createFunnelStage'>, options?: CallOptions): Promise<ResponseOf<'createFunnelStage'>> =>
      this.#call('createFunnelStage', [], { ...options, body }),
    get: (stageId: string, options?: CallOptions): Promise<ResponseOf<'getFunnelStage'>> =>
      this.#call('getFunnelStage', [stageId], options),
    update: (
      stageId: string,
      body: BodyOf<'updateFunnelStage'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateFunnelStage'>> => this.#call('updateFunnelStage', [stageId], { ...options, body }),
    /** `move_to`: the stage that takes the deleted stage's contacts. */
    delete: (stageId: string, query: QueryOf<'deleteFunnelStage'> = {}, options?: CallOptions): Promise<void> =>
      this.#call('deleteFunnelStage', [stageId], { ...options, query }),
    reorder: (body: BodyOf<'reorderFunnelStages'>, options?: CallOptions): Promise<ResponseOf<'reorderFunnelStages'>> =>
      this.#call('reorderFunnelStages', [], { ...options, body }),
  };

  readonly subOrigins = {
    list: (options?: CallOptions): Promise<ResponseOf<'listSubOrigins'>> => this.#call('listSubOrigins', [], options),
    create: (body: BodyOf<'createSubOrigin'>, options?: CallOptions): Promise<ResponseOf<'createSubOrigin'>> =>
      this.#call('createSubOrigin', [], { ...options, body }),
  };

  readonly templates = {
    list: (query: QueryOf<'listTemplates'> = {}, options?: CallOptions): Promise<ResponseOf<'listTemplates'>> =>
      this.#call('listTemplates', [], { ...options, query }),
    iterate: (query: QueryOf<'listTemplates'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listTemplates'>) => this.templates.list(page, options), query),
    create: (body: BodyOf<'createTemplate'>, options?: CallOptions): Promise<ResponseOf<'createTemplate'>> =>
      this.#call('createTemplate', [], { ...options, body }),
    get: (templateId: string, options?: CallOptions): Promise<ResponseOf<'getTemplate'>> =>
      this.#call('getTemplate', [templateId], options),
    delete: (templateId: string, options?: CallOptions): Promise<void> =>
      this.#call('deleteTemplate', [templateId], options),
    sendRequirements: (templateId: string, options?: CallOptions): Promise<ResponseOf<'getTemplateSendRequirements'>> =>
      this.#call('getTemplateSendRequirements', [templateId], options),
    /** POST /v1/templates/{id}/send: 202 with the Broadcast. Sends with a fresh Idempotency-Key unless one is given. */
    send: (
      templateId: string,
      body: BodyOf<'sendTemplate'>,
      options?: SendOptions,
    ): Promise<ResponseOf<'sendTemplate'>> => this.#call('sendTemplate', [templateId], { ...options, body }),
  };

  readonly broadcasts = {
    list: (query: QueryOf<'listBroadcasts'> = {}, options?: CallOptions): Promise<ResponseOf<'listBroadcasts'>> =>
      this.#call('listBroadcasts', [], { ...options, query }),
    iterate: (query: QueryOf<'listBroadcasts'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listBroadcasts'>) => this.broadcasts.list(page, options), query),
    get: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'getBroadcast'>> =>
      this.#call('getBroadcast', [broadcastId], options),
    /** One page of the recipients the worker has reached. */
    recipients: (
      broadcastId: string,
      query: QueryOf<'listBroadcastRecipients'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listBroadcastRecipients'>> =>
      this.#call('listBroadcastRecipients', [broadcastId], { ...options, query }),
    iterateRecipients: (broadcastId: string, query: QueryOf<'listBroadcastRecipients'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listBroadcastRecipients'>) => this.broadcasts.recipients(broadcastId, page, options), query),
    cancel: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'cancelBroadcast'>> =>
      this.#call('cancelBroadcast', [broadcastId], options),
    /** A new broadcast of the failed recipients (`body` narrows them); a fresh Idempotency-Key unless one is given. */
    retry: (
      broadcastId: string,
      body?: BodyOf<'retryBroadcast'>,
      options?: SendOptions,
    ): Promise<ResponseOf<'retryBroadcast'>> => this.#call('retryBroadcast', [broadcastId], { ...options, body }),
    /**
     * POST /v1/broadcasts (decisions §16): a template to every contact the `audience` matches, at once or at
     * `send_at`; 202 with the Broadcast. A fresh Idempotency-Key unless one is given.
     */
    create: (body: BodyOf<'createBroadcast'>, options?: SendOptions): Promise<ResponseOf<'createBroadcast'>> =>
      this.#call('createBroadcast', [], { ...options, body }),
    /** Stops hand-offs of a `scheduled`, `preparing` or `in_progress` broadcast. */
    pause: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'pauseBroadcast'>> =>
      this.#call('pauseBroadcast', [broadcastId], options),
    /** Resumes a `paused` broadcast (its template must be APPROVED). */
    resume: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'resumeBroadcast'>> =>
      this.#call('resumeBroadcast', [broadcastId], options),
  };

  readonly conversations = {
    list: (query: QueryOf<'listConversations'> = {}, options?: CallOptions): Promise<ResponseOf<'listConversations'>> =>
      this.#call('listConversations', [], { ...options, query }),
    iterate: (query: QueryOf<'listConversations'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listConversations'>) => this.conversations.list(page, options), query),
    get: (conversationId: string, options?: CallOptions): Promise<ResponseOf<'getConversation'>> =>
      this.#call('getConversation', [conversationId], options),
    /** PATCH /v1/conversations/{id} (decisions §19): status, snooze, assignee, team, priority, labels. */
    update: (
      conversationId: string,
      body: BodyOf<'updateConversation'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateConversation'>> =>
      this.#call('updateConversation', [conversationId], { ...options, body }),
    messages: (
      conversationId: string,
      query: QueryOf<'listConversationMessages'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listConversationMessages'>> =>
      this.#call('listConversationMessages', [conversationId], { ...options, query }),
    iterateMessages: (conversationId: string, query: QueryOf<'listConversationMessages'> = {}, options?: CallOptions) =>
      walk(
        (page: QueryOf<'listConversationMessages'>) => this.conversations.messages(conversationId, page, options),
        query,
      ),
    /**
     * POST /v1/conversations/{id}/messages (decisions §15): answers the contact with text, media by URL or a
     * template; a fresh `Idempotency-Key` unless `idempotencyKey` is given, so a retried call never sends twice.
     */
    reply: (
      conversationId: string,
      body: BodyOf<'replyToConversation'>,
      options?: SendOptions,
    ): Promise<ResponseOf<'replyToConversation'>> =>
      this.#call('replyToConversation', [conversationId], { ...options, body }),
    /** POST /v1/conversations/{id}/read: `unread_count` becomes 0 and the contact sees the read receipt. */
    /**
     * GET /v1/conversations/{id}/messages/{id}/media: a media message's file, streamed (decisions §15). `body` is
     * the unread stream of bytes (read it, pipe it, or cancel it); `contentType` the file's type.
     */
    downloadMedia: (conversationId: string, messageId: string, options?: CallOptions): Promise<MediaFile> =>
      this.#stream('downloadConversationMessageMedia', [conversationId, messageId], options),
    /** The address `downloadMedia` reads, for a link in a page whose session signs it (the console); no request. */
    mediaUrl: (conversationId: string, messageId: string): string =>
      `${this.baseUrl}${this.#path('downloadConversationMessageMedia', [conversationId, messageId])}`,
    markRead: (conversationId: string, options?: CallOptions): Promise<ResponseOf<'markConversationRead'>> =>
      this.#call('markConversationRead', [conversationId], options),
    /** POST /v1/conversations/{id}/ai-draft (decisions §20): a suggested reply from the AI assistant; sends nothing. */
    aiDraft: (conversationId: string, options?: CallOptions): Promise<ResponseOf<'draftConversationReply'>> =>
      this.#call('draftConversationReply', [conversationId], options),
  };

  /** Business hours and the away message (decisions §20), in the organization's timezone. */
  readonly businessHours = {
    get: (options?: CallOptions): Promise<ResponseOf<'getBusinessHours'>> =>
      this.#call('getBusinessHours', [], options),
    /** Replaces the whole setting. */
    put: (body: BodyOf<'putBusinessHours'>, options?: CallOptions): Promise<ResponseOf<'putBusinessHours'>> =>
      this.#call('putBusinessHours', [], { ...options, body }),
  };

  /** Rules run on every contact message (decisions §20). */
  readonly automationRules = {
    list: (options?: CallOptions): Promise<ResponseOf<'listAutomationRules'>> =>
      this.#call('listAutomationRules', [], options),
    create: (
      body: BodyOf<'createAutomationRule'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'createAutomationRule'>> => this.#call('createAutomationRule', [], { ...options, body }),
    get: (ruleId: string, options?: CallOptions): Promise<ResponseOf<'getAutomationRule'>> =>
      this.#call('getAutomationRule', [ruleId], options),
    update: (
      ruleId: string,
      body: BodyOf<'updateAutomationRule'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateAutomationRule'>> =>
      this.#call('updateAutomationRule', [ruleId], { ...options, body }),
    delete: (ruleId: string, options?: CallOptions): Promise<void> =>
      this.#call('deleteAutomationRule', [ruleId], options),
    /** A rule's runs, newest first (kept 30 days). */
    runs: (
      ruleId: string,
      query: QueryOf<'listAutomationRuleRuns'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listAutomationRuleRuns'>> =>
      this.#call('listAutomationRuleRuns', [ruleId], { ...options, query }),
    iterateRuns: (ruleId: string, query: QueryOf<'listAutomationRuleRuns'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listAutomationRuleRuns'>) => this.automationRules.runs(ruleId, page, options), query),
  };

  /** The AI assistant (decisions §20): its settings and a try-it call. */
  readonly aiAssistant = {
    /** The provider's `api_key` is never shown: `has_api_key` says whether one is stored. */
    get: (options?: CallOptions): Promise<ResponseOf<'getAiAssistant'>> => this.#call('getAiAssistant', [], options),
    put: (body: BodyOf<'putAiAssistant'>, options?: CallOptions): Promise<ResponseOf<'putAiAssistant'>> =>
      this.#call('putAiAssistant', [], { ...options, body }),
    /** What the assistant would answer a contact's message; sends nothing. */
    test: (body: BodyOf<'testAiAssistant'>, options?: CallOptions): Promise<ResponseOf<'testAiAssistant'>> =>
      this.#call('testAiAssistant', [], { ...options, body }),
  };

  /** decisions §19: private notes of a conversation. */
  readonly notes = {
    /** POST /v1/conversations/{id}/notes: a private note (never sent to the contact), with optional mentions. */
    create: (
      conversationId: string,
      body: BodyOf<'createConversationNote'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'createConversationNote'>> =>
      this.#call('createConversationNote', [conversationId], { ...options, body }),
  };

  /** decisions §19: teams of people, with auto-assignment. */
  readonly teams = {
    list: (options?: CallOptions): Promise<ResponseOf<'listTeams'>> => this.#call('listTeams', [], options),
    create: (body: BodyOf<'createTeam'>, options?: CallOptions): Promise<ResponseOf<'createTeam'>> =>
      this.#call('createTeam', [], { ...options, body }),
    get: (teamId: string, options?: CallOptions): Promise<ResponseOf<'getTeam'>> =>
      this.#call('getTeam', [teamId], options),
    update: (teamId: string, body: BodyOf<'updateTeam'>, options?: CallOptions): Promise<ResponseOf<'updateTeam'>> =>
      this.#call('updateTeam', [teamId], { ...options, body }),
    /** Its conversations stay, with `team_id: null`. */
    delete: (teamId: string, options?: CallOptions): Promise<ResponseOf<'deleteTeam'>> =>
      this.#call('deleteTeam', [teamId], options),
  };

  /** decisions §19: saved replies, inserted by short code. */
  readonly cannedResponses = {
    /** `q` keeps those whose short code starts with it or whose text holds it, ignoring case. */
    list: (
      query: QueryOf<'listCannedResponses'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listCannedResponses'>> => this.#call('listCannedResponses', [], { ...options, query }),
    create: (
      body: BodyOf<'createCannedResponse'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'createCannedResponse'>> => this.#call('createCannedResponse', [], { ...options, body }),
    get: (id: string, options?: CallOptions): Promise<ResponseOf<'getCannedResponse'>> =>
      this.#call('getCannedResponse', [id], options),
    update: (
      id: string,
      body: BodyOf<'updateCannedResponse'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateCannedResponse'>> => this.#call('updateCannedResponse', [id], { ...options, body }),
    delete: (id: string, options?: CallOptions): Promise<ResponseOf<'deleteCannedResponse'>> =>
      this.#call('deleteCannedResponse', [id], options),
  };

  /** decisions §19 (D294): files from the computer, sent in a reply with `{type, file_id}`. */
  readonly files = {
    /** POST /v1/files: `data` is the bytes in base64; the type comes from `mime_type` or the name. Kept 30 days. */
    upload: (body: BodyOf<'uploadFile'>, options?: CallOptions): Promise<ResponseOf<'uploadFile'>> =>
      this.#call('uploadFile', [], { ...options, body }),
    get: (fileId: string, options?: CallOptions): Promise<ResponseOf<'getFile'>> =>
      this.#call('getFile', [fileId], options),
  };

  /** decisions §19: the organization's people. */
  readonly users = {
    /** GET /v1/users: every person with their role and availability (`{items}`, whole). */
    list: (options?: CallOptions): Promise<ResponseOf<'listUsers'>> => this.#call('listUsers', [], options),
  };

  readonly channels = {
    /** GET /v1/channels/messaging/phones: the numbers a send can go out from (`id` is a `channel_id`). */
    phones: (options?: CallOptions): Promise<ResponseOf<'listMessagingPhones'>> =>
      this.#call('listMessagingPhones', [], options),
  };

  readonly webhookEndpoints = {
    list: (options?: CallOptions): Promise<ResponseOf<'listWebhookEndpoints'>> =>
      this.#call('listWebhookEndpoints', [], options),
    /** The answer carries the signing `secret` (`whsec_…`), shown only here and on rotation. */
    create: (
      body: BodyOf<'createWebhookEndpoint'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'createWebhookEndpoint'>> => this.#call('createWebhookEndpoint', [], { ...options, body }),
    get: (endpointId: string, options?: CallOptions): Promise<ResponseOf<'getWebhookEndpoint'>> =>
      this.#call('getWebhookEndpoint', [endpointId], options),
    update: (
      endpointId: string,
      body: BodyOf<'updateWebhookEndpoint'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateWebhookEndpoint'>> =>
      this.#call('updateWebhookEndpoint', [endpointId], { ...options, body }),
    delete: (endpointId: string, options?: CallOptions): Promise<void> =>
      this.#call('deleteWebhookEndpoint', [endpointId], options),
    rotateSecret: (endpointId: string, options?: CallOptions): Promise<ResponseOf<'rotateWebhookEndpointSecret'>> =>
      this.#call('rotateWebhookEndpointSecret', [endpointId], options),
    /** Queues a `webhook.test` event to this endpoint alone. */
    test: (endpointId: string, options?: CallOptions): Promise<ResponseOf<'testWebhookEndpoint'>> =>
      this.#call('testWebhookEndpoint', [endpointId], options),
    deliveries: (
      endpointId: string,
      query: QueryOf<'listWebhookDeliveries'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listWebhookDeliveries'>> =>
      this.#call('listWebhookDeliveries', [endpointId], { ...options, query }),
    iterateDeliveries: (endpointId: string, query: QueryOf<'listWebhookDeliveries'> = {}, options?: CallOptions) =>
      walk(
        (page: QueryOf<'listWebhookDeliveries'>) => this.webhookEndpoints.deliveries(endpointId, page, options),
        query,
      ),
    retryDelivery: (
      endpointId: string,
      deliveryId: string,
      options?: CallOptions,
    ): Promise<ResponseOf<'retryWebhookDelivery'>> =>
      this.#call('retryWebhookDelivery', [endpointId, deliveryId], options),
  };
}

/**
 * The client's method for each operation, as `group.method` (or `method`). The compiler refuses a missing or unknown
 * operation; test/sdk/operations.test.ts calls each against the served document's method and path.
 */
export const methodOfOperation = {
  getMe: 'me',
  listContacts: 'contacts.list',
  createContact: 'contacts.create',
  batchUpsertContacts: 'contacts.batchUpsert',
  getContact: 'contacts.get',
  updateContact: 'contacts.update',
  deleteContact: 'contacts.delete',
  listProperties: 'properties.list',
  createProperty: 'properties.create',
  getProperty: 'properties.get',
  updateProperty: 'properties.update',
  deleteProperty: 'properties.delete',
  reorderProperties: 'properties.reorder',
  listFunnelStages: 'funnelStages.list',
  createFunnelStage: 'funnelStages.create',
  getFunnelStage: 'funnelStages.get',
  updateFunnelStage: 'funnelStages.update',
  deleteFunnelStage: 'funnelStages.delete',
  reorderFunnelStages: 'funnelStages.reorder',
  listSubOrigins: 'subOrigins.list',
  createSubOrigin: 'subOrigins.create',
  listTemplates: 'templates.list',
  createTemplate: 'templates.create',
  getTemplate: 'templates.get',
  deleteTemplate: 'templates.delete',
  getTemplateSendRequirements: 'templates.sendRequirements',
  sendTemplate: 'templates.send',
  listBroadcasts: 'broadcasts.list',
  getBroadcast: 'broadcasts.get',
  listBroadcastRecipients: 'broadcasts.recipients',
  cancelBroadcast: 'broadcasts.cancel',
  retryBroadcast: 'broadcasts.retry',
  createBroadcast: 'broadcasts.create',
  pauseBroadcast: 'broadcasts.pause',
  resumeBroadcast: 'broadcasts.resume',
  listConversations: 'conversations.list',
  getConversation: 'conversations.get',
  updateConversation: 'conversations.update',
  createConversationNote: 'notes.create',
  listUsers: 'users.list',
  listTeams: 'teams.list',
  listCannedResponses: 'cannedResponses.list',
  createCannedResponse: 'cannedResponses.create',
  getCannedResponse: 'cannedResponses.get',
  updateCannedResponse: 'cannedResponses.update',
  deleteCannedResponse: 'cannedResponses.delete',
  createTeam: 'teams.create',
  getTeam: 'teams.get',
  updateTeam: 'teams.update',
  deleteTeam: 'teams.delete',
  listConversationMessages: 'conversations.messages',
  markConversationRead: 'conversations.markRead',
  downloadConversationMessageMedia: 'conversations.downloadMedia',
  replyToConversation: 'conversations.reply',
  uploadFile: 'files.upload',
  getFile: 'files.get',
  draftConversationReply: 'conversations.aiDraft',
  getBusinessHours: 'businessHours.get',
  putBusinessHours: 'businessHours.put',
  listAutomationRules: 'automationRules.list',
  createAutomationRule: 'automationRules.create',
  getAutomationRule: 'automationRules.get',
  updateAutomationRule: 'automationRules.update',
  deleteAutomationRule: 'automationRules.delete',
  listAutomationRuleRuns: 'automationRules.runs',
  getAiAssistant: 'aiAssistant.get',
  putAiAssistant: 'aiAssistant.put',
  testAiAssistant: 'aiAssistant.test',
  listMessagingPhones: 'channels.phones',
  listWebhookEndpoints: 'webhookEndpoints.list',
  createWebhookEndpoint: 'webhookEndpoints.create',
  getWebhookEndpoint: 'webhookEndpoints.get',
  updateWebhookEndpoint: 'webhookEndpoints.update',
  deleteWebhookEndpoint: 'webhookEndpoints.delete',
  rotateWebhookEndpointSecret: 'webhookEndpoints.rotateSecret',
  testWebhookEndpoint: 'webhookEndpoints.test',
  listWebhookDeliveries: 'webhookEndpoints.deliveries',
  retryWebhookDelivery: 'webhookEndpoints.retryDelivery',
} as const satisfies Record<ApiOperationId, string>;
