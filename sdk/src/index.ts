// @crm-messaging/sdk: a typed client for the CRM and Messaging public API. Fetch only: Node 20+ and browsers.
export {
  type ClientOptions,
  CrmClient,
  type MediaFile,
  newIdempotencyKey,
  type RawRequestOptions,
  type SendOptions,
} from './client.ts';
export { issueSentence, refusalReason, refusedItemIndex, refusedItems } from './contact-batches.ts';
export {
  CSV_LIST_SEPARATOR,
  type CsvColumns,
  type CsvRow,
  contactItemOf,
  csvColumns,
  type PropertyDefinition,
  propertyValueOf,
} from './contact-csv.ts';
export {
  ApiError,
  ApiKeyExpiredError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  type ErrorDetail,
  InsufficientScopeError,
  InternalServerError,
  NotFoundError,
  PayloadError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  ValidationError,
  type ValidationIssue,
} from './errors.ts';
export type { CallOptions, TransportOptions } from './http.ts';
export type { components, operations, paths } from './openapi.ts';
export { type ApiKeyScope, apiKeyScopes, contactOrigins } from './operations.ts';
export { type Page, walk } from './pagination.ts';
export { KEY_PATTERN, keyFromName, OPTION_KINDS, type PropertyKind, propertyKinds } from './property-keys.ts';
export type * from './types.ts';
export {
  signWebhook,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks.ts';
