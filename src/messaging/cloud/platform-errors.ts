// The Cloud API's error codes in the service's own vocabulary. Shared by the HTTP adapter (synchronous errors)
// and the webhook parser (asynchronous `statuses[].errors[]`), so one code means one thing everywhere.

import type { SendFailureReason } from '../platform.ts';

export interface PlatformErrorClass {
  reason: SendFailureReason;
  retryable: boolean;
}

// Keyed by the platform's error CODE, never by HTTP status: the platform answers 130429 (throughput) with HTTP 400.
const codeTable: ReadonlyMap<number, PlatformErrorClass> = new Map<number, PlatformErrorClass>([
  [131026, { reason: 'not_on_network', retryable: false }],
  // decisions §15: a free-form message outside the contact's 24-hour customer-service window ("Re-engagement message").
  [131047, { reason: 'window_closed', retryable: false }],
  [130429, { reason: 'rate_limited', retryable: true }],
  [131048, { reason: 'rate_limited', retryable: true }],
  [131056, { reason: 'rate_limited', retryable: true }],
  [80007, { reason: 'rate_limited', retryable: true }],
  [80008, { reason: 'rate_limited', retryable: true }],
  [4, { reason: 'rate_limited', retryable: true }],
  [131042, { reason: 'payment_required', retryable: false }],
  [132015, { reason: 'template_paused', retryable: false }],
  [132016, { reason: 'template_disabled', retryable: false }],
  [132000, { reason: 'invalid_parameter', retryable: false }],
  [132012, { reason: 'invalid_parameter', retryable: false }],
  [131008, { reason: 'invalid_parameter', retryable: false }],
  [131009, { reason: 'invalid_parameter', retryable: false }],
  [100, { reason: 'invalid_parameter', retryable: false }],
]);

/**
 * Classifies a platform failure. `code` is the platform's error code when it sent one; `httpStatus` the HTTP status
 * when there was an HTTP answer. Neither means the request never got an answer (network error, timeout), which is
 * worth retrying, as is a 5xx without a known code.
 */
export function classifyPlatformError(code: number | undefined, httpStatus: number | undefined): PlatformErrorClass {
  if (code !== undefined) {
    const known = codeTable.get(code);
    if (known) return { ...known };
  }
  if (httpStatus === undefined && code === undefined) return { reason: 'platform_error', retryable: true };
  if (httpStatus !== undefined && httpStatus >= 500) return { reason: 'platform_error', retryable: true };
  return { reason: 'platform_error', retryable: false };
}
