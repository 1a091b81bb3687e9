// CrmClient: one method per operation of the public API, grouped by resource, typed from the OpenAPI document.
import { type CallOptions, Transport, type TransportOptions } from './http.ts';
import { walk } from './pagination.ts';
import type { BodyOf, QueryOf, ResponseOf } from './types.ts';

export type ClientOptions = TransportOptions;

/** Options of a send: the `Idempotency-Key` (a fresh UUID unless given) and the call's own options. */
export interface SendOptions extends CallOptions {
  /** The same key within 24 hours returns the original broadcast instead of sending again. */
  idempotencyKey?: string;
}

const path = (template: string, ...ids: string[]): string => {
  let index = 0;
  return template.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
};

/** An Idempotency-Key for every send unless the caller gives one, so a retried call never sends twice. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export class CrmClient {
  readonly #http: Transport;

  constructor(options: ClientOptions) {
    this.#http = new Transport(options);
  }

  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  /** A request to any path, for operations newer than this SDK. */
  request<T = unknown>(
    method: string,
    url: string,
    options: { query?: Record<string, unknown>; body?: unknown } & CallOptions = {},
  ): Promise<T> {
    return this.#http.request<T>(method, url, options as never);
  }

  /** GET /v1/me: the organization behind the key. */
  me(options?: CallOptions): Promise<ResponseOf<'getMe'>> {
    return this.#http.request('GET', '/v1/me', options);
  }

  readonly contacts = {
    list: (query: QueryOf<'listContacts'> = {}, options?: CallOptions): Promise<ResponseOf<'listContacts'>> =>
      this.#http.request('GET', '/v1/contacts', { ...options, query }),
    /** Every contact matching `query`, page after page. */
    iterate: (query: QueryOf<'listContacts'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listContacts'>) => this.contacts.list(page, options), query),
    create: (body: BodyOf<'createContact'>, options?: CallOptions): Promise<ResponseOf<'createContact'>> =>
      this.#http.request('POST', '/v1/contacts', { ...options, body }),
    get: (contactId: string, options?: CallOptions): Promise<ResponseOf<'getContact'>> =>
      this.#http.request('GET', path('/v1/contacts/{contact_id}', contactId), options),
    update: (
      contactId: string,
      body: BodyOf<'updateContact'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateContact'>> =>
      this.#http.request('PATCH', path('/v1/contacts/{contact_id}', contactId), { ...options, body }),
    delete: (contactId: string, options?: CallOptions): Promise<void> =>
      this.#http.request('DELETE', path('/v1/contacts/{contact_id}', contactId), options),
  };

  readonly properties = {
    list: (options?: CallOptions): Promise<ResponseOf<'listProperties'>> =>
      this.#http.request('GET', '/v1/properties', options),
    create: (body: BodyOf<'createProperty'>, options?: CallOptions): Promise<ResponseOf<'createProperty'>> =>
      this.#http.request('POST', '/v1/properties', { ...options, body }),
    get: (propertyId: string, options?: CallOptions): Promise<ResponseOf<'getProperty'>> =>
      this.#http.request('GET', path('/v1/properties/{property_id}', propertyId), options),
    update: (
      propertyId: string,
      body: BodyOf<'updateProperty'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateProperty'>> =>
      this.#http.request('PATCH', path('/v1/properties/{property_id}', propertyId), { ...options, body }),
    delete: (propertyId: string, options?: CallOptions): Promise<void> =>
      this.#http.request('DELETE', path('/v1/properties/{property_id}', propertyId), options),
    reorder: (body: BodyOf<'reorderProperties'>, options?: CallOptions): Promise<ResponseOf<'reorderProperties'>> =>
      this.#http.request('POST', '/v1/properties/reorder', { ...options, body }),
  };

  readonly funnelStages = {
    list: (options?: CallOptions): Promise<ResponseOf<'listFunnelStages'>> =>
      this.#http.request('GET', '/v1/funnel-stages', options),
    create: (body: BodyOf<'createFunnelStage'>, options?: CallOptions): Promise<ResponseOf<'createFunnelStage'>> =>
      this.#http.request('POST', '/v1/funnel-stages', { ...options, body }),
    get: (stageId: string, options?: CallOptions): Promise<ResponseOf<'getFunnelStage'>> =>
      this.#http.request('GET', path('/v1/funnel-stages/{stage_id}', stageId), options),
    update: (
      stageId: string,
      body: BodyOf<'updateFunnelStage'>,
      options?: CallOptions,
    ): Promise<ResponseOf<'updateFunnelStage'>> =>
      this.#http.request('PATCH', path('/v1/funnel-stages/{stage_id}', stageId), { ...options, body }),
    /** `moveTo`: the stage that takes the deleted stage's contacts (decisions §6). */
    delete: (stageId: string, query: QueryOf<'deleteFunnelStage'> = {}, options?: CallOptions): Promise<void> =>
      this.#http.request('DELETE', path('/v1/funnel-stages/{stage_id}', stageId), { ...options, query }),
    reorder: (body: BodyOf<'reorderFunnelStages'>, options?: CallOptions): Promise<ResponseOf<'reorderFunnelStages'>> =>
      this.#http.request('POST', '/v1/funnel-stages/reorder', { ...options, body }),
  };

  readonly subOrigins = {
    list: (options?: CallOptions): Promise<ResponseOf<'listSubOrigins'>> =>
      this.#http.request('GET', '/v1/sub-origins', options),
    create: (body: BodyOf<'createSubOrigin'>, options?: CallOptions): Promise<ResponseOf<'createSubOrigin'>> =>
      this.#http.request('POST', '/v1/sub-origins', { ...options, body }),
  };

  readonly templates = {
    list: (query: QueryOf<'listTemplates'> = {}, options?: CallOptions): Promise<ResponseOf<'listTemplates'>> =>
      this.#http.request('GET', '/v1/templates', { ...options, query }),
    iterate: (query: QueryOf<'listTemplates'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listTemplates'>) => this.templates.list(page, options), query),
    create: (body: BodyOf<'createTemplate'>, options?: CallOptions): Promise<ResponseOf<'createTemplate'>> =>
      this.#http.request('POST', '/v1/templates', { ...options, body }),
    get: (templateId: string, options?: CallOptions): Promise<ResponseOf<'getTemplate'>> =>
      this.#http.request('GET', path('/v1/templates/{template_id}', templateId), options),
    delete: (templateId: string, options?: CallOptions): Promise<void> =>
      this.#http.request('DELETE', path('/v1/templates/{template_id}', templateId), options),
    sendRequirements: (templateId: string, options?: CallOptions): Promise<ResponseOf<'getTemplateSendRequirements'>> =>
      this.#http.request('GET', path('/v1/templates/{template_id}/send-requirements', templateId), options),
    /** POST /v1/templates/{id}/send: 202 with the Broadcast. Sends with a fresh Idempotency-Key unless one is given. */
    send: (
      templateId: string,
      body: BodyOf<'sendTemplate'>,
      options: SendOptions = {},
    ): Promise<ResponseOf<'sendTemplate'>> => {
      const { idempotencyKey = newIdempotencyKey(), ...call } = options;
      return this.#http.request('POST', path('/v1/templates/{template_id}/send', templateId), {
        ...call,
        headers: { ...call.headers, 'idempotency-key': idempotencyKey },
        body,
      });
    },
  };

  readonly broadcasts = {
    list: (query: QueryOf<'listBroadcasts'> = {}, options?: CallOptions): Promise<ResponseOf<'listBroadcasts'>> =>
      this.#http.request('GET', '/v1/broadcasts', { ...options, query }),
    iterate: (query: QueryOf<'listBroadcasts'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listBroadcasts'>) => this.broadcasts.list(page, options), query),
    get: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'getBroadcast'>> =>
      this.#http.request('GET', path('/v1/broadcasts/{broadcast_id}', broadcastId), options),
    /** One page of the recipients the worker has reached. */
    recipients: (
      broadcastId: string,
      query: QueryOf<'listBroadcastRecipients'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listBroadcastRecipients'>> =>
      this.#http.request('GET', path('/v1/broadcasts/{broadcast_id}/recipients', broadcastId), { ...options, query }),
    iterateRecipients: (broadcastId: string, query: QueryOf<'listBroadcastRecipients'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listBroadcastRecipients'>) => this.broadcasts.recipients(broadcastId, page, options), query),
    cancel: (broadcastId: string, options?: CallOptions): Promise<ResponseOf<'cancelBroadcast'>> =>
      this.#http.request('POST', path('/v1/broadcasts/{broadcast_id}/cancel', broadcastId), options),
  };

  readonly conversations = {
    list: (query: QueryOf<'listConversations'> = {}, options?: CallOptions): Promise<ResponseOf<'listConversations'>> =>
      this.#http.request('GET', '/v1/conversations', { ...options, query }),
    iterate: (query: QueryOf<'listConversations'> = {}, options?: CallOptions) =>
      walk((page: QueryOf<'listConversations'>) => this.conversations.list(page, options), query),
    get: (conversationId: string, options?: CallOptions): Promise<ResponseOf<'getConversation'>> =>
      this.#http.request('GET', path('/v1/conversations/{conversation_id}', conversationId), options),
    messages: (
      conversationId: string,
      query: QueryOf<'listConversationMessages'> = {},
      options?: CallOptions,
    ): Promise<ResponseOf<'listConversationMessages'>> =>
      this.#http.request('GET', path('/v1/conversations/{conversation_id}/messages', conversationId), {
        ...options,
        query,
      }),
    iterateMessages: (conversationId: string, query: QueryOf<'listConversationMessages'> = {}, options?: CallOptions) =>
      walk(
        (page: QueryOf<'listConversationMessages'>) => this.conversations.messages(conversationId, page, options),
        query,
      ),
  };

  readonly channels = {
    /** GET /v1/channels/messaging/phones: the numbers a send can go out from (`id` is a `channel_id`). */
    phones: (options?: CallOptions): Promise<ResponseOf<'listMessagingPhones'>> =>
      this.#http.request('GET', '/v1/channels/messaging/phones', options),
  };
}
