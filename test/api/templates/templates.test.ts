// Templates through HTTP on the sandbox platform: create (submitted in the same call), read, list, delete,
// review webhooks, and send requirements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
const clock = manualClock(Date.now());
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

const body = (overrides: Record<string, unknown> = {}) => ({
  name: 'order_update',
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/a.png'] } },
    {
      type: 'BODY',
      text: 'Hi {{first_name}}, order {{order_id}} ships today',
      example: {
        body_text_named_params: [
          { param_name: 'first_name', example: 'Ana' },
          { param_name: 'order_id', example: 'A-1' },
        ],
      },
    },
    { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://example.com/t/{{1}}', example: ['x'] }] },
  ],
  ...overrides,
});

async function orgWithAccount() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  return { org, key, account };
}

describe('POST /v1/templates', () => {
  it('submits the template and answers 201 PENDING; a review webhook approves it', async () => {
    const { key, account } = await orgWithAccount();
    const created = await h.api('POST', '/v1/templates', { key, body: body() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      business_account_id: account.business_account_id,
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      status: 'PENDING',
      rejected_reason: null,
      catalog_send_defaults: null,
    });
    expect(created.body.id).toMatch(/^tpl_/);
    expect(created.body.platform_template_id).toMatch(/^\d{15}$/);

    const review = await h.admin('POST', `/sandbox/templates/${created.body.id}/review`, { event: 'APPROVED' });
    expect(review.status).toBe(200);
    expect(review.body.webhook.entry[0].changes[0]).toMatchObject({
      field: 'message_template_status_update',
      value: { event: 'APPROVED', message_template_id: Number(created.body.platform_template_id) },
    });
    const read = await h.api('GET', `/v1/templates/${created.body.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('APPROVED');

    const requirements = await h.api('GET', `/v1/templates/${created.body.id}/send-requirements`, { key });
    expect(requirements.status).toBe(200);
    expect(requirements.body).toMatchObject({
      parameter_format: 'named',
      contact_resolvable_tokens: ['body.first_name'],
      url_suffixes: [{ key: '0', button_index: 0 }],
      media: [{ token: 'header.media', type: 'image', max_bytes: 5 * 1024 * 1024 }],
      never_sendable_reason: null,
    });
    expect(requirements.body.variables.map((v: { token: string }) => v.token)).toEqual([
      'body.first_name',
      'body.order_id',
    ]);
  });

  it('stores a rejection reason and follows a category change', async () => {
    const { key } = await orgWithAccount();
    const created = await h.api('POST', '/v1/templates', { key, body: body({ category: 'UTILITY' }) });
    const id = created.body.id;
    await h.admin('POST', `/sandbox/templates/${id}/review`, { event: 'REJECTED', reason: 'INVALID_FORMAT' });
    expect((await h.api('GET', `/v1/templates/${id}`, { key })).body).toMatchObject({
      status: 'REJECTED',
      rejected_reason: 'INVALID_FORMAT',
    });
    await h.admin('POST', `/sandbox/templates/${id}/review`, { event: 'APPROVED', new_category: 'MARKETING' });
    expect((await h.api('GET', `/v1/templates/${id}`, { key })).body).toMatchObject({
      status: 'APPROVED',
      rejected_reason: null,
      category: 'MARKETING',
    });
    await h.admin('POST', `/sandbox/templates/${id}/review`, { event: 'PAUSED' });
    expect((await h.api('GET', `/v1/templates/${id}`, { key })).body.status).toBe('PAUSED');
    await h.admin('POST', `/sandbox/templates/${id}/review`, { event: 'APPROVED' });
    expect((await h.api('GET', `/v1/templates/${id}`, { key })).body.status).toBe('APPROVED');
  });

  it('takes the only messaging account, and needs business_account_id when there are several', async () => {
    const { org, key, account } = await orgWithAccount();
    const explicit = await h.api('POST', '/v1/templates', {
      key,
      body: body({ name: 'explicit', business_account_id: account.business_account_id }),
    });
    expect(explicit.status).toBe(201);
    const unknown = await h.api('POST', '/v1/templates', {
      key,
      body: body({ name: 'unknown', business_account_id: '999' }),
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'business_account_id'], type: 'value_error' });
    await h.createAccount(org.id, { numbers: [] });
    const ambiguous = await h.api('POST', '/v1/templates', { key, body: body({ name: 'ambiguous' }) });
    expect(ambiguous.status).toBe(422);
    expect(ambiguous.body.detail[0]).toMatchObject({ loc: ['body', 'business_account_id'], type: 'missing' });

    const { key: lonely } = await h.createOrg();
    const none = await h.api('POST', '/v1/templates', { key: lonely, body: body() });
    expect(none.status).toBe(422);
    expect(none.body.detail[0].msg).toContain('no messaging account');
  });

  it.each([
    [{ name: 'Bad Name' }, ['body', 'name'], 'string_pattern_mismatch'],
    [{ category: 'PROMO' }, ['body', 'category'], 'enum'],
    [{ components: [] }, ['body', 'components'], 'too_short'],
    [{ components: [{ type: 'FOOTER', text: 'bye' }] }, ['body', 'components'], 'missing_body'],
    [{ components: [{ type: 'BODY', text: 'x'.repeat(1025) }] }, ['body', 'components', 0, 'text'], 'string_too_long'],
    [{ surprise: true }, ['body', 'surprise'], 'extra_forbidden'],
  ])('refuses %j with a 422 at %j', async (overrides, loc, type) => {
    const { key } = await orgWithAccount();
    const response = await h.api('POST', '/v1/templates', { key, body: body(overrides) });
    expect(response.status).toBe(422);
    expect(response.body.detail).toContainEqual(expect.objectContaining({ loc, type }));
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toEqual([]);
  });

  it('refuses a name taken in the same language (409) and accepts it in another', async () => {
    const { key } = await orgWithAccount();
    expect((await h.api('POST', '/v1/templates', { key, body: body() })).status).toBe(201);
    const again = await h.api('POST', '/v1/templates', { key, body: body() });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatchObject({ code: 'duplicate_template', name: 'order_update', language: 'en_US' });
    const spanish = await h.api('POST', '/v1/templates', { key, body: body({ language: 'es-MX' }) });
    expect(spanish.status).toBe(201);
    expect(spanish.body.language).toBe('es_MX');
  });

  it('lets exactly one of two concurrent creates of one name win', async () => {
    const { key } = await orgWithAccount();
    const answers = await Promise.all([1, 2, 3].map(() => h.api('POST', '/v1/templates', { key, body: body() })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toHaveLength(1);
  });
});

describe('DELETE /v1/templates/{id}', () => {
  it('soft-deletes, frees the name locally, and the platform cool-down refuses an immediate re-create', async () => {
    const { key } = await orgWithAccount();
    const created = await h.api('POST', '/v1/templates', { key, body: body() });
    const deleted = await h.api('DELETE', `/v1/templates/${created.body.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await h.api('GET', `/v1/templates/${created.body.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/templates/${created.body.id}`, { key })).status).toBe(404);

    const again = await h.api('POST', '/v1/templates', { key, body: body() });
    expect(again.status).toBe(422);
    expect(again.body.detail).toMatchObject({ code: 'platform_rejected' });
    expect(again.body.detail.reason).toContain('being deleted');
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toEqual([]);

    clock.advance(60_001);
    const later = await h.api('POST', '/v1/templates', { key, body: body() });
    expect(later.status).toBe(201);
  });
});

describe('GET /v1/templates', () => {
  it('pages newest first and filters by status, name, language and category', async () => {
    const { key } = await orgWithAccount();
    const ids: string[] = [];
    for (const [index, category] of ['UTILITY', 'MARKETING', 'UTILITY', 'MARKETING', 'UTILITY'].entries()) {
      const created = await h.api('POST', '/v1/templates', { key, body: body({ name: `t_${index}`, category }) });
      ids.push(created.body.id);
    }
    await h.admin('POST', `/sandbox/templates/${ids[0]}/review`, { event: 'APPROVED' });

    const first = await h.api('GET', '/v1/templates?limit=2', { key });
    expect(first.body.items.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[3]]);
    const second = await h.api('GET', `/v1/templates?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.items.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    const third = await h.api('GET', `/v1/templates?limit=2&cursor=${second.body.next_cursor}`, { key });
    expect(third.body.items.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect(third.body.next_cursor).toBeNull();

    const approved = await h.api('GET', '/v1/templates?status=APPROVED', { key });
    expect(approved.body.items.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    const marketing = await h.api('GET', '/v1/templates?category=MARKETING', { key });
    expect(marketing.body.items).toHaveLength(2);
    const byName = await h.api('GET', '/v1/templates?name=t_2&language=en_US', { key });
    expect(byName.body.items.map((t: { id: string }) => t.id)).toEqual([ids[2]]);
    const several = await h.api('GET', '/v1/templates?status=PENDING,APPROVED', { key });
    expect(several.body.items).toHaveLength(5);

    expect((await h.api('GET', '/v1/templates?status=NOPE', { key })).status).toBe(422);
    const crossed = await h.api('GET', `/v1/templates?limit=2&status=PENDING&cursor=${first.body.next_cursor}`, {
      key,
    });
    expect(crossed.status).toBe(422);
    expect(crossed.body.detail[0].loc).toEqual(['query', 'cursor']);
  });
});

describe('isolation', () => {
  it("answers 404 for another organization's template", async () => {
    const { key } = await orgWithAccount();
    const created = await h.api('POST', '/v1/templates', { key, body: body() });
    const { key: other } = await orgWithAccount();
    for (const [method, path] of [
      ['GET', `/v1/templates/${created.body.id}`],
      ['GET', `/v1/templates/${created.body.id}/send-requirements`],
      ['DELETE', `/v1/templates/${created.body.id}`],
    ] as const) {
      const response = await h.api(method, path, { key: other });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toEqual({ detail: 'not_found' });
    }
    expect((await h.api('GET', '/v1/templates', { key: other })).body.items).toEqual([]);
  });
});
