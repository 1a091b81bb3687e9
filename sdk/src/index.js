// @crm-messaging/sdk: a typed client for the CRM and Messaging public API. Fetch only: Node 20+ and browsers.
export { CrmClient, newIdempotencyKey, } from './client.js';
export { contactItemOf, refusalReason, refusedItemIndex, refusedItems } from './contact-batches.js';
export { ApiError, ApiKeyExpiredError, AuthenticationError, BadRequestError, ConflictError, ConnectionError, InsufficientScopeError, InternalServerError, NotFoundError, PayloadError, PaymentRequiredError, PermissionDeniedError, RateLimitError, ValidationError, } from './errors.js';
export { walk } from './pagination.js';
export { signWebhook, verifyWebhook, WebhookVerificationError, } from './webhooks.js';
