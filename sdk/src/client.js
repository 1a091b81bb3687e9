// CrmClient: one method per operation of the public API, grouped by resource, typed from the OpenAPI document. Each
// method names its operation; the method and path come from the generated table (`operations.ts`), so a method
// cannot drift from the route. A new route: `npm run sdk:generate`, then a method here and its line in
// `methodOfOperation` (the typecheck and test/sdk/operations.test.ts fail until both exist).
import { Transport } from './http.js';
import { operationTable } from './operations.js';
import { walk } from './pagination.js';
/** An Idempotency-Key for every send unless the caller gives one, so a retried call never sends twice. */
export function newIdempotencyKey() {
    return globalThis.crypto.randomUUID();
}
const table = operationTable;
const matchers = Object.values(table).map((operation) => ({
    operation,
    pattern: new RegExp(`^${operation.path.replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
}));
/** The operation `METHOD path` names, if the API has one (a query string or a full URL is fine). */
export function operationAt(method, url) {
    const path = new URL(url, 'http://sdk.invalid').pathname;
    const upper = method.toUpperCase();
    return matchers.find((matcher) => matcher.operation.method === upper && matcher.pattern.test(path))?.operation;
}
/** The headers of a call, with an `Idempotency-Key` added where the operation takes one and none is given. */
function withIdempotencyKey(operation, options) {
    const { headers = {}, idempotencyKey } = options;
    if (!operation?.idempotencyKey)
        return headers;
    if (idempotencyKey === undefined && Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key')) {
        return headers;
    }
    return { ...headers, 'idempotency-key': idempotencyKey ?? newIdempotencyKey() };
}
/** The name in `Content-Disposition` (`filename*=UTF-8''…` first, then `filename="…"`). */
function filenameOf(disposition) {
    if (!disposition)
        return undefined;
    const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
    if (encoded) {
        try {
            return decodeURIComponent(encoded.trim());
        }
        catch {
            return undefined;
        }
    }
    return /filename="([^"]*)"/i.exec(disposition)?.[1];
}
export class CrmClient {
    #http;
    constructor(options) {
        this.#http = new Transport(options);
    }
    get baseUrl() {
        return this.#http.baseUrl;
    }
    /**
     * A request to any path, for operations newer than this SDK. A POST to an operation that takes an
     * `Idempotency-Key` gets a fresh one unless `idempotencyKey` or the header is given.
     */
    request(method, url, options = {}) {
        const { idempotencyKey: _key, ...rest } = options;
        const headers = withIdempotencyKey(operationAt(method, url), options);
        return this.#http.request(method, url, { ...rest, headers });
    }
    /** Calls operation `id` with its path ids filled in (each encoded) in the order of its path. */
    #call(id, ids, options = {}) {
        const operation = table[id];
        let index = 0;
        const url = operation.path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
        const { idempotencyKey: _key, ...rest } = options;
        return this.#http.request(operation.method, url, {
            ...rest,
            headers: withIdempotencyKey(operation, options),
        });
    }
    /** Like #call, for an operation that answers a file: the response's stream, unread, with its type and size. */
    async #stream(id, ids, options = {}) {
        const operation = table[id];
        let index = 0;
        const url = operation.path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++] ?? ''));
        const response = await this.#http.stream(operation.method, url, options);
        const length = response.headers.get('content-length');
        const body = response.body ?? new ReadableStream({ start: (controller) => controller.close() });
        return {
            contentType: response.headers.get('content-type') ?? 'application/octet-stream',
            contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
            filename: filenameOf(response.headers.get('content-disposition')),
            body,
            response,
        };
    }
    /** GET /v1/me: the organization behind the key. */
    me(options) {
        return this.#call('getMe', [], options);
    }
    contacts = {
        list: (query = {}, options) => this.#call('listContacts', [], { ...options, query }),
        /** Every contact matching `query`, page after page. */
        iterate: (query = {}, options) => walk((page) => this.contacts.list(page, options), query),
        create: (body, options) => this.#call('createContact', [], { ...options, body }),
        /** Up to 100 contacts created or updated by `match_on`, all or nothing (decisions: contacts in bulk). */
        batchUpsert: (body, options) => this.#call('batchUpsertContacts', [], { ...options, body }),
        get: (contactId, options) => this.#call('getContact', [contactId], options),
        update: (contactId, body, options) => this.#call('updateContact', [contactId], { ...options, body }),
        delete: (contactId, options) => this.#call('deleteContact', [contactId], options),
    };
    properties = {
        list: (options) => this.#call('listProperties', [], options),
        create: (body, options) => this.#call('createProperty', [], { ...options, body }),
        get: (propertyId, options) => this.#call('getProperty', [propertyId], options),
        update: (propertyId, body, options) => this.#call('updateProperty', [propertyId], { ...options, body }),
        delete: (propertyId, options) => this.#call('deleteProperty', [propertyId], options),
        reorder: (body, options) => this.#call('reorderProperties', [], { ...options, body }),
    };
    funnelStages = {
        list: (options) => this.#call('listFunnelStages', [], options),
        create: (body, options) => this.#call('createFunnelStage', [], { ...options, body }),
        get: (stageId, options) => this.#call('getFunnelStage', [stageId], options),
        update: (stageId, body, options) => this.#call('updateFunnelStage', [stageId], { ...options, body }),
        /** `move_to`: the stage that takes the deleted stage's contacts. */
        delete: (stageId, query = {}, options) => this.#call('deleteFunnelStage', [stageId], { ...options, query }),
        reorder: (body, options) => this.#call('reorderFunnelStages', [], { ...options, body }),
    };
    subOrigins = {
        list: (options) => this.#call('listSubOrigins', [], options),
        create: (body, options) => this.#call('createSubOrigin', [], { ...options, body }),
    };
    templates = {
        list: (query = {}, options) => this.#call('listTemplates', [], { ...options, query }),
        iterate: (query = {}, options) => walk((page) => this.templates.list(page, options), query),
        create: (body, options) => this.#call('createTemplate', [], { ...options, body }),
        get: (templateId, options) => this.#call('getTemplate', [templateId], options),
        delete: (templateId, options) => this.#call('deleteTemplate', [templateId], options),
        sendRequirements: (templateId, options) => this.#call('getTemplateSendRequirements', [templateId], options),
        /** POST /v1/templates/{id}/send: 202 with the Broadcast. Sends with a fresh Idempotency-Key unless one is given. */
        send: (templateId, body, options) => this.#call('sendTemplate', [templateId], { ...options, body }),
    };
    broadcasts = {
        list: (query = {}, options) => this.#call('listBroadcasts', [], { ...options, query }),
        iterate: (query = {}, options) => walk((page) => this.broadcasts.list(page, options), query),
        get: (broadcastId, options) => this.#call('getBroadcast', [broadcastId], options),
        /** One page of the recipients the worker has reached. */
        recipients: (broadcastId, query = {}, options) => this.#call('listBroadcastRecipients', [broadcastId], { ...options, query }),
        iterateRecipients: (broadcastId, query = {}, options) => walk((page) => this.broadcasts.recipients(broadcastId, page, options), query),
        cancel: (broadcastId, options) => this.#call('cancelBroadcast', [broadcastId], options),
        /** A new broadcast of the failed recipients (`body` narrows them); a fresh Idempotency-Key unless one is given. */
        retry: (broadcastId, body, options) => this.#call('retryBroadcast', [broadcastId], { ...options, body }),
        /**
         * POST /v1/broadcasts (decisions §16): a template to every contact the `audience` matches, at once or at
         * `send_at`; 202 with the Broadcast. A fresh Idempotency-Key unless one is given.
         */
        create: (body, options) => this.#call('createBroadcast', [], { ...options, body }),
        /** Stops hand-offs of a `scheduled`, `preparing` or `in_progress` broadcast. */
        pause: (broadcastId, options) => this.#call('pauseBroadcast', [broadcastId], options),
        /** Resumes a `paused` broadcast (its template must be APPROVED). */
        resume: (broadcastId, options) => this.#call('resumeBroadcast', [broadcastId], options),
    };
    conversations = {
        list: (query = {}, options) => this.#call('listConversations', [], { ...options, query }),
        iterate: (query = {}, options) => walk((page) => this.conversations.list(page, options), query),
        get: (conversationId, options) => this.#call('getConversation', [conversationId], options),
        messages: (conversationId, query = {}, options) => this.#call('listConversationMessages', [conversationId], { ...options, query }),
        iterateMessages: (conversationId, query = {}, options) => walk((page) => this.conversations.messages(conversationId, page, options), query),
        /**
         * POST /v1/conversations/{id}/messages (decisions §15): answers the contact with text, media by URL or a
         * template; a fresh `Idempotency-Key` unless `idempotencyKey` is given, so a retried call never sends twice.
         */
        reply: (conversationId, body, options) => this.#call('replyToConversation', [conversationId], { ...options, body }),
        /** POST /v1/conversations/{id}/read: `unread_count` becomes 0 and the contact sees the read receipt. */
        /**
         * GET /v1/conversations/{id}/messages/{id}/media: a media message's file, streamed (decisions §15). `body` is
         * the unread stream of bytes (read it, pipe it, or cancel it); `contentType` the file's type.
         */
        downloadMedia: (conversationId, messageId, options) => this.#stream('downloadConversationMessageMedia', [conversationId, messageId], options),
        markRead: (conversationId, options) => this.#call('markConversationRead', [conversationId], options),
    };
    channels = {
        /** GET /v1/channels/messaging/phones: the numbers a send can go out from (`id` is a `channel_id`). */
        phones: (options) => this.#call('listMessagingPhones', [], options),
    };
    webhookEndpoints = {
        list: (options) => this.#call('listWebhookEndpoints', [], options),
        /** The answer carries the signing `secret` (`whsec_…`), shown only here and on rotation. */
        create: (body, options) => this.#call('createWebhookEndpoint', [], { ...options, body }),
        get: (endpointId, options) => this.#call('getWebhookEndpoint', [endpointId], options),
        update: (endpointId, body, options) => this.#call('updateWebhookEndpoint', [endpointId], { ...options, body }),
        delete: (endpointId, options) => this.#call('deleteWebhookEndpoint', [endpointId], options),
        rotateSecret: (endpointId, options) => this.#call('rotateWebhookEndpointSecret', [endpointId], options),
        /** Queues a `webhook.test` event to this endpoint alone. */
        test: (endpointId, options) => this.#call('testWebhookEndpoint', [endpointId], options),
        deliveries: (endpointId, query = {}, options) => this.#call('listWebhookDeliveries', [endpointId], { ...options, query }),
        iterateDeliveries: (endpointId, query = {}, options) => walk((page) => this.webhookEndpoints.deliveries(endpointId, page, options), query),
        retryDelivery: (endpointId, deliveryId, options) => this.#call('retryWebhookDelivery', [endpointId, deliveryId], options),
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
    listConversationMessages: 'conversations.messages',
    markConversationRead: 'conversations.markRead',
    downloadConversationMessageMedia: 'conversations.downloadMedia',
    replyToConversation: 'conversations.reply',
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
};
