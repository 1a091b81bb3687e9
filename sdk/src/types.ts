// Named types drawn from the generated `openapi.ts` by operation, so they follow the served document whether its
// shapes are inline or named components.
import type { operations } from './openapi.ts';
import type { contactOrigins } from './operations.ts';

export type OperationId = keyof operations;
type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON body of an operation's success response (200, 201 or 202); void for a 204. */
export type ResponseOf<K extends OperationId> = operations[K]['responses'] extends infer R
  ? R extends { 200: infer S }
    ? JsonOf<S>
    : R extends { 201: infer S }
      ? JsonOf<S>
      : R extends { 202: infer S }
        ? JsonOf<S>
        : undefined
  : never;

/** The JSON request body of an operation. */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: infer B }
  ? JsonOf<NonNullable<B>>
  : never;

/** The query parameters of an operation, all optional: the server fills the defaults it documents. */
export type QueryOf<K extends OperationId> = operations[K]['parameters'] extends { query?: infer Q }
  ? [NonNullable<Q>] extends [never]
    ? Record<string, never>
    : Partial<NonNullable<Q>>
  : Record<string, never>;

export type Organization = ResponseOf<'getMe'>;
export type Contact = ResponseOf<'getContact'>;
export type ContactPage = ResponseOf<'listContacts'>;
export type ContactInput = BodyOf<'createContact'>;
export type ContactPatch = BodyOf<'updateContact'>;
export type ContactListQuery = QueryOf<'listContacts'>;
export type Property = ResponseOf<'getProperty'>;
export type PropertyInput = BodyOf<'createProperty'>;
export type PropertyPatch = BodyOf<'updateProperty'>;
export type FunnelStage = ResponseOf<'getFunnelStage'>;
export type FunnelStageInput = BodyOf<'createFunnelStage'>;
export type FunnelStagePatch = BodyOf<'updateFunnelStage'>;
export type SubOrigin = ResponseOf<'listSubOrigins'>['items'][number];
export type SubOriginInput = BodyOf<'createSubOrigin'>;
export type Template = ResponseOf<'getTemplate'>;
export type TemplateInput = BodyOf<'createTemplate'>;
export type SendRequirements = ResponseOf<'getTemplateSendRequirements'>;
export type SendInput = BodyOf<'sendTemplate'>;
export type Broadcast = ResponseOf<'getBroadcast'>;
export type BroadcastRecipient = ResponseOf<'listBroadcastRecipients'>['items'][number];
export type Conversation = ResponseOf<'getConversation'>;
export type Message = ResponseOf<'listConversationMessages'>['items'][number];
export type MessagingPhone = ResponseOf<'listMessagingPhones'>['items'][number];
/** Where a contact came from (decisions §5), as the server lists them. */
export type ContactOrigin = (typeof contactOrigins)[number];
