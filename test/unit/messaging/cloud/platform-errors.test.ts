import { describe, expect, it } from 'vitest';
import { classifyPlatformError } from '../../../../src/messaging/cloud/platform-errors.ts';

describe('classifyPlatformError', () => {
  it.each([
    [131026, 400, 'not_on_network', false],
    [131047, 400, 'window_closed', false],
    [130429, 400, 'rate_limited', true],
    [131048, 400, 'rate_limited', true],
    [131056, 400, 'rate_limited', true],
    [80007, 400, 'rate_limited', true],
    [80008, 400, 'rate_limited', true],
    [4, 403, 'rate_limited', true],
    [131042, 400, 'payment_required', false],
    [132015, 400, 'template_paused', false],
    [132016, 400, 'template_disabled', false],
    [132000, 400, 'invalid_parameter', false],
    [132012, 400, 'invalid_parameter', false],
    [131008, 400, 'invalid_parameter', false],
    [131009, 400, 'invalid_parameter', false],
    [100, 400, 'invalid_parameter', false],
    [131000, 400, 'platform_error', false],
    [190, 401, 'platform_error', false],
  ])('code %i (HTTP %i) is %s, retryable %s', (code, status, reason, retryable) => {
    expect(classifyPlatformError(code, status)).toEqual({ reason, retryable });
  });

  it('lets a known code win over a 5xx status', () => {
    expect(classifyPlatformError(131026, 500)).toEqual({ reason: 'not_on_network', retryable: false });
  });

  it('retries a 5xx with an unknown code or none', () => {
    expect(classifyPlatformError(1, 500)).toEqual({ reason: 'platform_error', retryable: true });
    expect(classifyPlatformError(undefined, 503)).toEqual({ reason: 'platform_error', retryable: true });
  });

  it('retries when there was no answer at all (network, timeout)', () => {
    expect(classifyPlatformError(undefined, undefined)).toEqual({ reason: 'platform_error', retryable: true });
  });

  it('does not retry an unknown code reported asynchronously (no HTTP status)', () => {
    expect(classifyPlatformError(131000, undefined)).toEqual({ reason: 'platform_error', retryable: false });
  });

  it('returns a fresh object each time (callers may mutate)', () => {
    const first = classifyPlatformError(131026, 400);
    first.retryable = true;
    expect(classifyPlatformError(131026, 400).retryable).toBe(false);
  });
});
