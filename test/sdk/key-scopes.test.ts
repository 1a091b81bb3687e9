// The SDK's errors for decisions §18 against a live server: a key without the scope, an expired key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiKeyExpiredError,
  AuthenticationError,
  CrmClient,
  InsufficientScopeError,
  PermissionDeniedError,
} from '../../sdk/src/index.ts';
import { manualClock } from '../helpers/clock.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const clock = manualClock(Date.parse('2030-01-01T10:00:00.250Z'));
let h: Harness;
let baseUrl: string;
beforeAll(async () => {
  h = await startHarness({ clock, unlimited: true });
  baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

describe('SDK errors of key scopes and expiry', () => {
  it('throws InsufficientScopeError with `required`, and ApiKeyExpiredError after expires_at', async () => {
    const { org } = await h.createOrg();
    const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
    const created = await h.admin('POST', `/organizations/${org.id}/api-keys`, {
      scopes: ['contacts:read', 'account:read'],
      expires_at: expiresAt,
    });
    const client = new CrmClient({ apiKey: created.body.key, baseUrl });
    expect((await client.me()).api_key).toEqual({
      id: created.body.id,
      name: null,
      scopes: ['contacts:read', 'account:read'],
      expires_at: expiresAt,
    });
    const refused = await client.contacts.create({ first_name: 'Ana' }).catch((error) => error);
    expect(refused).toBeInstanceOf(InsufficientScopeError);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope', required: 'contacts:write' });

    clock.advance(60_000);
    const expired = await client.contacts.list().catch((error) => error);
    expect(expired).toBeInstanceOf(ApiKeyExpiredError);
    expect(expired).toBeInstanceOf(AuthenticationError);
    expect(expired).toMatchObject({ status: 401, code: 'api_key_expired' });
  });
});
