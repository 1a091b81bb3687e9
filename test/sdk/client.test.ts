// The SDK against a live server: the real app listening on 127.0.0.1 on the test database, called over fetch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  CrmClient,
  NotFoundError,
  RateLimitError,
  ValidationError,
} from '../../sdk/src/index.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { phones, sender } from '../helpers/sends.ts';

let h: Harness;
let baseUrl: string;
beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

/** A client whose fetch records each request's method, URL and headers (the SDK's own injection point). */
function recordingClient(key: string, options: Record<string, unknown> = {}) {
  const requests: { method: string; url: string; headers: Headers }[] = [];
  const client = new CrmClient({
    apiKey: key,
    baseUrl,
    ...options,
    fetch: (input, init) => {
      requests.push({ method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers) });
      return fetch(input, init);
    },
  });
  return { client, requests };
}

describe('CrmClient on a live server', () => {
  it('reads the organization behind the key', async () => {
    const { org, key } = await h.createOrg({ name: 'SDK Corp' });
    const client = new CrmClient({ apiKey: key, baseUrl });
    expect(await client.me()).toMatchObject({ id: org.id, name: 'SDK Corp', plan: 'scale', trial: false });
  });

  it('creates, reads, updates, lists and deletes a contact, with typed errors on the way', async () => {
    const { key } = await h.createOrg();
    const client = new CrmClient({ apiKey: key, baseUrl });
    const created = await client.contacts.create({ first_name: 'Ana', email: 'ana@example.com', country: 'BR' });
    expect(created).toMatchObject({ first_name: 'Ana', origin: 'API', messaging_status: 'unavailable' });
    expect(await client.contacts.get(created.id)).toEqual(created);
    const updated = await client.contacts.update(created.id, { city: 'Recife', phone: '+5581999990000' });
    expect(updated).toMatchObject({ city: 'Recife', messaging_status: 'unverified' });
    const page = await client.contacts.list({ country: ['BR'], limit: 10 });
    expect(page.items.map((contact) => contact.id)).toEqual([created.id]);

    const duplicate = await client.contacts.create({ email: 'ANA@example.com' }).catch((error) => error);
    expect(duplicate).toBeInstanceOf(ConflictError);
    expect(duplicate).toMatchObject({ status: 409, code: 'duplicate_contact' });
    expect(duplicate.detail).toMatchObject({ field: 'email', conflicting_contact_id: created.id });
    expect(duplicate.requestId).toMatch(/./);

    const invalid = await client.contacts.create({ phone: '12345' }).catch((error) => error);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_error' });
    expect(invalid.issues.map((issue: { loc: unknown[] }) => issue.loc)).toContainEqual(['body', 'phone']);

    await client.contacts.delete(created.id);
    const gone = await client.contacts.get(created.id).catch((error) => error);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toBeInstanceOf(ApiError);
    expect(gone).toMatchObject({ status: 404, code: 'not_found', detail: 'not_found' });
  });

  it('walks every page of a list with an async iterator, with the filters on every page', async () => {
    const { key } = await h.createOrg();
    const { client, requests } = recordingClient(key);
    const ids: string[] = [];
    for (let index = 0; index < 7; index++) ids.push((await client.contacts.create({ first_name: `P${index}` })).id);
    await client.contacts.create({ first_name: 'Elsewhere', country: 'MX' });
    const seen: string[] = [];
    for await (const contact of client.contacts.iterate({ limit: 2, sort: 'name', country: ['MX', 'US'] })) {
      seen.push(contact.first_name ?? '');
    }
    expect(seen).toEqual(['Elsewhere']);
    requests.length = 0;
    const walked: string[] = [];
    for await (const contact of client.contacts.iterate({ limit: 2, q: 'P' })) walked.push(contact.id);
    expect(walked.sort()).toEqual([...ids].sort());
    expect(requests).toHaveLength(4); // 2 + 2 + 2 + 1, the last page with a null cursor
    expect(requests.every((request) => new URL(request.url).searchParams.get('q') === 'P')).toBe(true);
    // Breaking out of the loop stops fetching.
    requests.length = 0;
    for await (const _contact of client.contacts.iterate({ limit: 2 })) break;
    expect(requests).toHaveLength(1);
  });

  it('creates an audience broadcast, pauses, resumes and iterates broadcasts by status (decisions §16)', async () => {
    const { key, template } = await sender(h);
    const { client, requests } = recordingClient(key);
    for (const phone of phones(2)) await client.contacts.create({ phone });
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await client.broadcasts.create({
      template_id: template.id,
      audience: {},
      variables: { 'body.1': '1' },
      send_at: sendAt,
      name: 'SDK campaign',
    });
    expect(created).toMatchObject({ status: 'scheduled', name: 'SDK campaign', send_at: sendAt });
    expect(requests.at(-1)?.headers.get('idempotency-key')).toBeTruthy();
    expect(await client.broadcasts.pause(created.id)).toMatchObject({ status: 'paused', status_reason: 'requested' });
    const paused = [];
    for await (const broadcast of client.broadcasts.iterate({ status: ['paused'], limit: 1 }))
      paused.push(broadcast.id);
    expect(paused).toEqual([created.id]);
    expect(await client.broadcasts.resume(created.id)).toMatchObject({ status: 'scheduled', status_reason: null });
    const conflict = await client.broadcasts.resume(created.id).catch((error) => error);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'broadcast_not_resumable' });
  });

  it('replies in a conversation with a fresh Idempotency-Key unless one is given, and marks it read', async () => {
    const { key, account } = await sender(h);
    const [phone] = phones(1);
    await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from: phone, text: 'hi' });
    const { client, requests } = recordingClient(key);
    const [conversation] = (await client.conversations.list({ window: 'open' })).items;
    const one = await client.conversations.reply(conversation!.id, { type: 'text', text: 'hello' });
    expect(one).toMatchObject({ status: 'sending', sender: 'agent', type: 'text' });
    const posted = requests.filter((request) => request.method === 'POST');
    expect(posted[0]?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    const first = await client.conversations.reply(
      conversation!.id,
      { type: 'text', text: 'x' },
      { idempotencyKey: 'r1' },
    );
    const again = await client.conversations.reply(
      conversation!.id,
      { type: 'text', text: 'x' },
      { idempotencyKey: 'r1' },
    );
    expect(again.id).toBe(first.id);
    expect(await client.conversations.markRead(conversation!.id)).toMatchObject({ unread_count: 0 });
  });

  it('sends with a fresh Idempotency-Key unless one is given, and follows the broadcast', async () => {
    const { key, template } = await sender(h);
    const { client, requests } = recordingClient(key);
    const [first, second] = phones(2);
    const body = { recipients: [{ phone: first!, variables: { 'body.1': '42' } }] };
    const one = await client.templates.send(template.id, body);
    const two = await client.templates.send(template.id, body);
    const keys = requests.filter((request) => request.method === 'POST').map((r) => r.headers.get('idempotency-key'));
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(one.id).not.toBe(two.id);

    const replayed = await client.templates.send(template.id, body, { idempotencyKey: 'sdk-send-1' });
    const again = await client.templates.send(template.id, body, { idempotencyKey: 'sdk-send-1' });
    expect(again.id).toBe(replayed.id);

    const multi = await client.templates.send(template.id, {
      recipients: [first, second].map((phone) => ({ phone: phone!, variables: { 'body.1': '7' } })),
    });
    expect(multi).toMatchObject({ status: 'in_progress', requested: 2 });
    await h.fanout.drain();
    expect(await client.broadcasts.get(multi.id)).toMatchObject({ status: 'completed', sent: 2, pending: 0 });
    const page = await client.broadcasts.recipients(multi.id, { limit: 1 });
    expect(page.items).toHaveLength(1);
    const recipients = [];
    for await (const recipient of client.broadcasts.iterateRecipients(multi.id, { limit: 1 }))
      recipients.push(recipient);
    expect(recipients.map((recipient) => recipient.phone).sort()).toEqual([first, second].sort());

    const missing = await client.templates.send(template.id, { recipients: { phone: first! } }).catch((e) => e);
    expect(missing).toBeInstanceOf(ValidationError);
    expect(missing).toMatchObject({ status: 422, code: 'missing_variables', detail: { index: 0, tokens: ['body.1'] } });
  });

  it('refuses a bad key with AuthenticationError, and an unreachable server with ConnectionError', async () => {
    const client = new CrmClient({ apiKey: 'oak_not_a_key', baseUrl });
    await expect(client.me()).rejects.toMatchObject({ name: 'AuthenticationError', code: 'invalid_api_key' });
    await expect(client.me()).rejects.toBeInstanceOf(AuthenticationError);
    const nowhere = new CrmClient({ apiKey: 'oak_x', baseUrl: 'http://127.0.0.1:9' });
    await expect(nowhere.me()).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('429 handling on a live server (trial budget: 5 requests per second)', () => {
  it('waits Retry-After and retries, so a burst over the budget still succeeds', async () => {
    const { key } = await h.createOrg({ plan: 'free', trial: true });
    const { client, requests } = recordingClient(key, { maxRetries: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => client.me()));
    expect(results.every((me) => me.trial === true)).toBe(true);
    // More requests went out than calls were made: the refused ones were sent again.
    expect(requests.length).toBeGreaterThan(12);
  });

  it('throws RateLimitError with Retry-After once its retries are spent', async () => {
    const { key } = await h.createOrg({ plan: 'free', trial: true });
    const { client, requests } = recordingClient(key, { maxRetries: 0 });
    // 20 at once: even spread over three one-second windows (a slow machine), 5 a window cannot take them all.
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => client.me()));
    const refused = results.filter((result) => result.status === 'rejected').map((result) => result.reason);
    expect(refused.length).toBeGreaterThan(0);
    for (const error of refused) {
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 1 });
    }
    expect(requests).toHaveLength(20);
  });

  it('does not wait when Retry-After asks for longer than maxRetryDelayMs', async () => {
    const { key } = await h.createOrg({ plan: 'free', trial: true });
    const { client, requests } = recordingClient(key, { maxRetries: 3, maxRetryDelayMs: 500 });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => client.me()));
    expect(results.some((result) => result.status === 'rejected')).toBe(true);
    expect(requests).toHaveLength(20);
  });
});

describe('types from the OpenAPI document (checked by `npm run typecheck`)', () => {
  it('refuses wrong bodies and queries at compile time and types the answers', () => {
    const client = new CrmClient({ apiKey: 'oak_x', baseUrl: 'http://127.0.0.1:9' });
    // Never called: the assertions are the compiler's.
    const unused = async () => {
      // @ts-expect-error first_name is a string
      await client.contacts.create({ first_name: 1 });
      // @ts-expect-error sort is one of the documented values
      await client.contacts.list({ sort: 'shoe_size' });
      // @ts-expect-error a send needs recipients
      await client.templates.send('tpl_1', {});
      const broadcast = await client.broadcasts.get('bc_1');
      const requested: number = broadcast.requested;
      // @ts-expect-error counts are numbers
      const sent: string = broadcast.sent;
      const me = await client.me();
      const trial: boolean = me.trial;
      return [requested, sent, trial];
    };
    expect(typeof unused).toBe('function');
  });
});

// A field another type of message takes is refused with the right article ("an audio message", not "a audio").
it('names the type of message with its article', async () => {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from: '+15557001299', text: 'Hi' });
  const crm = new CrmClient({ apiKey: key, baseUrl });
  const [conversation] = (await crm.conversations.list()).items;
  const refusal = async (body: Record<string, unknown>) => {
    const error = await crm.conversations.reply(conversation!.id, body as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((issue) => issue.msg);
  };
  const media = 'https://example.com/file';
  expect(await refusal({ type: 'audio', media_url: media, caption: 'Listen' })).toEqual([
    'Not allowed for an audio message',
  ]);
  expect(await refusal({ type: 'image', media_url: media, filename: 'a.png' })).toEqual([
    'Not allowed for an image message',
  ]);
  expect(await refusal({ type: 'video', media_url: media, filename: 'a.mp4' })).toEqual([
    'Not allowed for a video message',
  ]);
});
