// The console's people and sessions through HTTP (decisions §17): users made by the operator with a one-time sign-in
// link, passwords, server-side sessions in cookies with idle and absolute ends, sign-out, throttled sign-in, CSRF on
// every change, and a session token refused by /v1.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from '../../../src/http/rate-limit.ts';
import { manualClock } from '../../helpers/clock.ts';
import { consoleClient, createUser, setCookies, TEST_PASSWORD } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

const clock = manualClock();
let h: Harness;
let orgId: string;
let key: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
  ({
    org: { id: orgId },
    key,
  } = await h.createOrg());
});
afterAll(() => h.close());

const HOUR = 3600 * 1000;
const tokenOf = (signInUrl: string) => new URL(signInUrl).hash.replace('#token=', '');
const email = () => `p-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('users made by the operator', () => {
  it('answers 201 with the user and an absolute one-time sign-in link under PUBLIC_URL', async () => {
    const address = email();
    const response = await h.admin('POST', `/organizations/${orgId}/users`, {
      email: address,
      name: 'Ana',
      role: 'admin',
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ email: address, name: 'Ana', role: 'admin', last_sign_in_at: null });
    expect(response.body.id).toMatch(/^usr_/);
    expect(response.body.sign_in_url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/app\/set-password#token=sil_/);
    expect(Date.parse(response.body.sign_in_url_expires_at) - clock.now().getTime()).toBe(24 * HOUR);
  });

  it('refuses a second user with the same email in any case (409), an unknown organization (404), bad input (422)', async () => {
    const address = email();
    expect((await h.admin('POST', `/organizations/${orgId}/users`, { email: address, role: 'agent' })).status).toBe(
      201,
    );
    const other = await h.createOrg();
    const duplicate = await h.admin('POST', `/organizations/${other.org.id}/users`, {
      email: address.toUpperCase(),
      role: 'agent',
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ detail: { code: 'duplicate_user', field: 'email' } });
    expect((await h.admin('POST', '/organizations/org_nowhere/users', { email: email(), role: 'agent' })).status).toBe(
      404,
    );
    const bad = await h.admin('POST', `/organizations/${orgId}/users`, { email: 'not-an-email', role: 'owner' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual(
      expect.arrayContaining(['body.email', 'body.role']),
    );
  });
});

describe('choosing a password from a sign-in link', () => {
  it('needs at least 10 characters, signs in, and works once', async () => {
    const created = await h.admin('POST', `/organizations/${orgId}/users`, { email: email(), role: 'agent' });
    const token = tokenOf(created.body.sign_in_url);
    const client = consoleClient(h);
    const lookup = await client.call('POST', '/app/api/sign-in-links/lookup', { body: { token } });
    expect(lookup.status).toBe(200);
    expect(lookup.body.email).toBe(created.body.email);

    const short = await client.call('POST', '/app/api/sign-in-links/accept', {
      body: { token, password: '123456789' },
    });
    expect(short.status).toBe(422);
    expect(short.body.detail[0].loc).toEqual(['body', 'password']);

    const accepted = await client.call('POST', '/app/api/sign-in-links/accept', {
      body: { token, password: TEST_PASSWORD },
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ id: created.body.id, role: 'agent' });
    expect(accepted.body.organization.id).toBe(orgId);
    expect((await client.call('GET', '/app/api/session')).status).toBe(200);

    const again = await consoleClient(h).call('POST', '/app/api/sign-in-links/accept', {
      body: { token, password: 'another password 123' },
    });
    expect(again.status).toBe(410);
    expect(again.body.detail.code).toBe('sign_in_link_expired');
    expect((await client.call('POST', '/app/api/sign-in-links/lookup', { body: { token } })).status).toBe(410);
    const unknown = await client.call('POST', '/app/api/sign-in-links/accept', {
      body: { token: 'sil_unknown', password: TEST_PASSWORD },
    });
    expect(unknown.status).toBe(404);
  });

  it('lets exactly one of concurrent uses of a link through', async () => {
    const created = await h.admin('POST', `/organizations/${orgId}/users`, { email: email(), role: 'agent' });
    const token = tokenOf(created.body.sign_in_url);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        consoleClient(h).call('POST', '/app/api/sign-in-links/accept', {
          body: { token, password: `password number ${index}` },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 410, 410, 410, 410, 410]);
  });

  it('expires after 24 hours', async () => {
    const created = await h.admin('POST', `/organizations/${orgId}/users`, { email: email(), role: 'agent' });
    clock.advance(24 * HOUR);
    const late = await consoleClient(h).call('POST', '/app/api/sign-in-links/accept', {
      body: { token: tokenOf(created.body.sign_in_url), password: TEST_PASSWORD },
    });
    expect(late.status).toBe(410);
  });

  it('is refused from another origin', async () => {
    const created = await h.admin('POST', `/organizations/${orgId}/users`, { email: email(), role: 'agent' });
    const response = await consoleClient(h).call('POST', '/app/api/sign-in-links/accept', {
      body: { token: tokenOf(created.body.sign_in_url), password: TEST_PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(response.status).toBe(403);
    expect(response.body.detail.code).toBe('csrf_failed');
  });
});

describe('signing in and out', () => {
  it('sets HttpOnly, SameSite=Lax cookies scoped to /app (not Secure over http) and stores only a hash', async () => {
    const { email: address } = await createUser(h, orgId, { role: 'admin' });
    const client = consoleClient(h);
    const response = await client.call('POST', '/app/api/session', {
      body: { email: address, password: TEST_PASSWORD },
    });
    expect(response.status).toBe(201);
    const lines = [response.headers['set-cookie']].flat().map(String);
    const session = lines.find((line) => line.startsWith('crm_session='));
    const csrf = lines.find((line) => line.startsWith('crm_csrf='));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).toMatch(/Path=\/app(;|$)/);
    expect(session).not.toMatch(/Secure/i);
    expect(csrf).not.toMatch(/HttpOnly/i);
    expect(response.body.csrf_token).toBe(client.cookies.get('crm_csrf'));
    expect(response.body.user.last_sign_in_at).not.toBeNull();

    const token = client.cookies.get('crm_session') as string;
    const rows = await h.database.db.selectFrom('user_sessions').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('answers a wrong password or an unknown email with the same 401', async () => {
    const { email: address } = await createUser(h, orgId, { role: 'agent' });
    const wrong = await consoleClient(h).call('POST', '/app/api/session', {
      body: { email: address, password: 'wrong password!' },
    });
    const unknown = await consoleClient(h).call('POST', '/app/api/session', {
      body: { email: email(), password: 'wrong password!' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.detail.code).toBe('invalid_credentials');
  });

  it('signs out at once', async () => {
    const { client } = await createUser(h, orgId);
    const oldCookies = new Map(client.cookies);
    const out = await client.call('DELETE', '/app/api/session');
    expect(out.status).toBe(204);
    expect(setCookies(out).get('crm_session')).toBe('');
    const replayed = consoleClient(h);
    for (const [name, value] of oldCookies) replayed.cookies.set(name, value);
    const after = await replayed.call('GET', '/app/api/v1/contacts');
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ detail: { code: 'session_required', message: 'Sign in first.' } });
  });

  it('ends after 12 hours idle, and after 7 days however busy', async () => {
    const { client } = await createUser(h, orgId);
    clock.advance(11 * HOUR);
    expect((await client.call('GET', '/app/api/session')).status).toBe(200);
    clock.advance(11 * HOUR);
    expect((await client.call('GET', '/app/api/session')).status).toBe(200);
    clock.advance(12 * HOUR + 60_000);
    expect((await client.call('GET', '/app/api/session')).status).toBe(401);

    const busy = (await createUser(h, orgId)).client;
    for (let hours = 0; hours < 7 * 24 - 10; hours += 10) {
      clock.advance(10 * HOUR);
      expect((await busy.call('GET', '/app/api/session')).status).toBe(200);
    }
    clock.advance(10 * HOUR);
    expect((await busy.call('GET', '/app/api/session')).status).toBe(401);
  });
});

describe('throttled sign-in', () => {
  it('answers 429 with Retry-After after 10 failures for one email within 15 minutes, even with the password', async () => {
    const { email: address } = await createUser(h, orgId);
    for (let attempt = 0; attempt < 10; attempt++) {
      clock.advance(1000);
      const failed = await consoleClient(h).call('POST', '/app/api/session', {
        body: { email: address, password: 'not the password' },
      });
      expect(failed.status).toBe(401);
    }
    const refused = await consoleClient(h).call('POST', '/app/api/session', {
      body: { email: address.toUpperCase(), password: TEST_PASSWORD },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.detail.code).toBe('too_many_sign_in_attempts');
    // The first failure leaves the window 15 minutes after it was made, 10 seconds ago.
    expect(Number(refused.headers['retry-after'])).toBe(15 * 60 - 9);
    clock.advance(15 * 60 * 1000);
    const later = await consoleClient(h).call('POST', '/app/api/session', {
      body: { email: address, password: TEST_PASSWORD },
    });
    expect(later.status).toBe(201);
  });

  it('checks at most 10 passwords of concurrent guesses', async () => {
    const { email: address } = await createUser(h, orgId);
    clock.advance(1000);
    const answers = await Promise.all(
      Array.from({ length: 25 }, () =>
        consoleClient(h).call('POST', '/app/api/session', { body: { email: address, password: 'guess guess guess' } }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    const next = await consoleClient(h).call('POST', '/app/api/session', {
      body: { email: address, password: TEST_PASSWORD },
    });
    if (statuses.filter((status) => status === 401).length === 10) expect(next.status).toBe(429);
    clock.advance(15 * 60 * 1000);
  });
});

describe('the console API under /app/api', () => {
  it('answers the /v1 operations with the session, as /v1 does with a key', async () => {
    const { client } = await createUser(h, orgId);
    const created = await client.call('POST', '/app/api/v1/contacts', {
      body: { first_name: 'Console', phone: '+15550109999' },
    });
    expect(created.status).toBe(201);
    const byKey = await h.api('GET', `/v1/contacts/${created.body.id}`, { key });
    const bySession = await client.call('GET', `/app/api/v1/contacts/${created.body.id}`);
    expect(bySession.status).toBe(200);
    expect(bySession.body).toEqual(byKey.body);
    const invalid = await client.call('POST', '/app/api/v1/contacts', { body: { first_name: 12 } });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual((await h.api('POST', '/v1/contacts', { key, body: { first_name: 12 } })).body);
  });

  it('needs a session (401) and, for a change, the CSRF header and a same-origin Origin (403)', async () => {
    const anonymous = await h.api('GET', '/app/api/v1/contacts');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail.code).toBe('session_required');
    const withKey = await h.api('GET', '/app/api/v1/contacts', { key });
    expect(withKey.status).toBe(401);

    const { client } = await createUser(h, orgId);
    const body = { first_name: 'Csrf' };
    const cases: Record<string, string>[] = [
      { 'x-csrf-token': '' },
      { 'x-csrf-token': 'forged' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of cases) {
      const refused = await client.call('POST', '/app/api/v1/contacts', { body, headers });
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.body.detail.code).toBe('csrf_failed');
    }
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const noOrigin = await h.api('POST', '/app/api/v1/contacts', {
      body,
      headers: { cookie, 'x-csrf-token': client.cookies.get('crm_csrf') as string },
    });
    expect(noOrigin.status).toBe(403);
    // Another session's CSRF token does not fit this one.
    const other = (await createUser(h, orgId)).client;
    const crossed = await client.call('POST', '/app/api/v1/contacts', {
      body,
      headers: {
        'x-csrf-token': other.cookies.get('crm_csrf') as string,
        cookie: `crm_session=${client.cookies.get('crm_session')}; crm_csrf=${other.cookies.get('crm_csrf')}`,
      },
    });
    expect(crossed.status).toBe(403);
    const contacts = await h.api('GET', '/v1/contacts?q=Csrf', { key });
    expect(contacts.body.items).toEqual([]);
    // Reads need no CSRF header.
    expect((await client.call('GET', '/app/api/v1/contacts', { headers: { 'x-csrf-token': '' } })).status).toBe(200);
  });

  it('keeps the session token out of /v1: 403 api_key_required', async () => {
    const { client } = await createUser(h, orgId);
    const token = client.cookies.get('crm_session') as string;
    const response = await h.api('GET', '/v1/contacts', { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: 'api_key_required' });
    const cookieOnly = await h.api('GET', '/v1/contacts', { headers: { cookie: `crm_session=${token}` } });
    expect(cookieOnly.status).toBe(401);
  });

  it('answers an unknown path under /app/api with a JSON 404', async () => {
    const { client } = await createUser(h, orgId);
    const response = await client.call('GET', '/app/api/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'not_found' });
  });
});

describe('a signed-in person’s rate budget (decisions §17, D238)', () => {
  it('is 20 a second for each person, whatever the plan, apart from the organization’s key budget', async () => {
    const budgetClock = manualClock();
    // The file's database (a fresh organization): only the clock and the budgets' store are this app's own.
    const limited = await startHarness({ clock: budgetClock, database: h.database });
    try {
      const { org, key: trialKey } = await limited.createOrg({ trial: true, trial_ends_at: '2031-01-01T00:00:00Z' });
      const admin = (await createUser(limited, org.id, { role: 'admin' })).client;
      const agent = (await createUser(limited, org.id, { role: 'agent' })).client;
      budgetClock.advance(1000);
      // The trial's 5 key requests a second are spent: the people in the console still work.
      for (let index = 0; index < 5; index++)
        expect((await limited.api('GET', '/v1/me', { key: trialKey })).status).toBe(200);
      expect((await limited.api('GET', '/v1/me', { key: trialKey })).status).toBe(429);
      for (let index = 0; index < 20; index++) {
        const read = await admin.call('GET', '/app/api/v1/contacts');
        expect(read.status).toBe(200);
        expect(read.headers['x-ratelimit-limit']).toBe('20');
        expect(read.headers['x-ratelimit-remaining']).toBe(String(19 - index));
      }
      const over = await admin.call('GET', '/app/api/v1/contacts');
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ detail: 'rate_limited' });
      expect(over.headers['retry-after']).toBe('1');
      expect(over.headers['x-ratelimit-remaining']).toBe('0');
      // The other person's budget is their own.
      expect((await agent.call('GET', '/app/api/v1/contacts')).headers['x-ratelimit-remaining']).toBe('19');
      budgetClock.advance(1000);
      // Nor does a busy person spend the keys' budget.
      expect((await limited.api('GET', '/v1/me', { key: trialKey })).headers['x-ratelimit-remaining']).toBe('4');
      expect((await admin.call('GET', '/app/api/v1/contacts')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it.skipIf(!process.env.TEST_REDIS_URL)('is one budget across processes that share Redis', async () => {
    const redisClients = [new Redis(process.env.TEST_REDIS_URL!), new Redis(process.env.TEST_REDIS_URL!)];
    const prefix = `rl-person-${Date.now()}-${Math.random()}`;
    const shared = manualClock(Date.parse('2031-06-01T00:00:00.100Z') + Math.floor(Math.random() * 1e6) * 1000);
    const first = await startHarness({
      clock: shared,
      database: h.database,
      rateLimitStore: createRedisRateLimitStore(redisClients[0]!, prefix),
    });
    const second = await startHarness({
      clock: shared,
      database: first.database,
      rateLimitStore: createRedisRateLimitStore(redisClients[1]!, prefix),
    });
    try {
      const { org } = await first.createOrg({ trial: true, trial_ends_at: '2099-01-01T00:00:00Z' });
      const { client } = await createUser(first, org.id);
      shared.advance(1000);
      const other = consoleClient(second);
      for (const [name, value] of client.cookies) other.cookies.set(name, value);
      const statuses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? client : other).call('GET', '/app/api/v1/contacts')),
      );
      expect(statuses.filter((response) => response.status === 200)).toHaveLength(20);
      expect(statuses.filter((response) => response.status === 429)).toHaveLength(10);
    } finally {
      await second.app.close();
      await first.close();
      for (const client of redisClients) client.disconnect();
    }
  });
});
