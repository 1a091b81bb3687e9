// /webhooks/messaging: the handshake, signatures over raw bytes, batching, replays, concurrency and ordering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DEFAULTS } from '../../../src/config.ts';
import { signPayload } from '../../../src/messaging/cloud/webhook-signature.ts';
import { pruneHistory } from '../../../src/worker/retention.ts';
import { type Harness, startHarness, WEBHOOK_APP_SECRET, WEBHOOK_VERIFY_TOKEN } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const templateBody = {
  name: 'welcome',
  language: 'en_US',
  category: 'MARKETING',
  components: [{ type: 'BODY', text: 'Welcome {{1}}', example: { body_text: [['Ana']] } }],
};

async function setup() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  const template = (await h.api('POST', '/v1/templates', { key, body: templateBody })).body;
  return { org, key, account, template, waba: account.business_account_id as string };
}

/** A template status webhook as the platform documents it (numeric id, hyphenated language). */
function statusWebhook(waba: string, platformTemplateId: string, event: string, time: number, reason = 'NONE') {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        time,
        changes: [
          {
            field: 'message_template_status_update',
            value: {
              event,
              message_template_id: Number(platformTemplateId),
              message_template_name: 'welcome',
              message_template_language: 'en-US',
              reason,
            },
          },
        ],
      },
    ],
  };
}

const statusOf = async (key: string, id: string) => (await h.api('GET', `/v1/templates/${id}`, { key })).body.status;

describe('GET /webhooks/messaging (subscription handshake)', () => {
  it('echoes the challenge for the configured verify token', async () => {
    const response = await h.app.inject(
      `/webhooks/messaging?hub.mode=subscribe&hub.verify_token=${WEBHOOK_VERIFY_TOKEN}&hub.challenge=1158201444`,
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toBe('1158201444');
  });

  it.each([
    ['a wrong token', 'hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1'],
    ['a wrong mode', `hub.mode=unsubscribe&hub.verify_token=${WEBHOOK_VERIFY_TOKEN}&hub.challenge=1`],
    ['no token', 'hub.mode=subscribe&hub.challenge=1'],
  ])('refuses %s with 403', async (_label, query) => {
    const response = await h.app.inject(`/webhooks/messaging?${query}`);
    expect(response.statusCode).toBe(403);
  });
});

describe('POST /webhooks/messaging: signatures', () => {
  it('refuses a forged, missing or re-serialised signature with 401 and changes nothing', async () => {
    const { key, template, waba } = await setup();
    const payload = statusWebhook(waba, template.platform_template_id, 'APPROVED', 1_800_000_000);
    const raw = JSON.stringify(payload);
    const forged = await h.webhook(payload, { signature: signPayload(raw, 'not-the-secret') });
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual({ detail: 'invalid_signature' });
    expect((await h.webhook(payload, { signature: null })).status).toBe(401);
    expect((await h.webhook(payload, { signature: 'sha256=abc' })).status).toBe(401);
    // The signature covers the exact bytes: the same JSON with other whitespace is another message.
    const spaced = JSON.stringify(payload, null, 2);
    expect((await h.webhook(payload, { raw: spaced, signature: signPayload(raw, WEBHOOK_APP_SECRET) })).status).toBe(
      401,
    );
    expect(await statusOf(key, template.id)).toBe('PENDING');
    // The same bytes, correctly signed, apply.
    expect((await h.webhook(payload, { raw: spaced, signature: signPayload(spaced, WEBHOOK_APP_SECRET) })).status).toBe(
      200,
    );
    expect(await statusOf(key, template.id)).toBe('APPROVED');
  });

  it('answers 400 to signed bytes that are not JSON, and 200 to payloads it cannot use', async () => {
    expect((await h.webhook(undefined, { raw: 'not json' })).status).toBe(400);
    expect((await h.webhook({ object: 'page', entry: 'x' })).status).toBe(200);
    expect((await h.webhook(statusWebhook('000000', '1', 'APPROVED', 1))).status).toBe(200); // unknown account
  });
});

describe('POST /webhooks/messaging: template events', () => {
  it('ignores a replay and a late older event: the status never goes back', async () => {
    const { key, template, waba } = await setup();
    const id = template.platform_template_id;
    const approved = statusWebhook(waba, id, 'APPROVED', 1_800_000_100);
    expect((await h.webhook(approved)).status).toBe(200);
    expect((await h.webhook(statusWebhook(waba, id, 'PAUSED', 1_800_000_200))).status).toBe(200);
    expect(await statusOf(key, template.id)).toBe('PAUSED');
    const replay = await h.webhook(approved);
    expect(replay.status).toBe(200);
    expect(await statusOf(key, template.id)).toBe('PAUSED');
    // An older event never seen before arrives late: it is not newer than what is stored.
    await h.webhook(statusWebhook(waba, id, 'REJECTED', 1_800_000_150, 'INVALID_FORMAT'));
    expect(await statusOf(key, template.id)).toBe('PAUSED');
    // A newer approval (the pause ended) applies.
    await h.webhook(statusWebhook(waba, id, 'APPROVED', 1_800_000_300));
    expect(await statusOf(key, template.id)).toBe('APPROVED');
  });

  it('keeps the status through FLAGGED and quality updates, and stores unknown events as given', async () => {
    const { key, template, waba } = await setup();
    const id = template.platform_template_id;
    await h.webhook(statusWebhook(waba, id, 'APPROVED', 1_800_000_100));
    await h.webhook(statusWebhook(waba, id, 'FLAGGED', 1_800_000_200));
    const quality = statusWebhook(waba, id, 'APPROVED', 1_800_000_300);
    quality.entry[0]!.changes[0]!.value = {
      message_template_id: Number(id),
      previous_quality_score: 'GREEN',
      new_quality_score: 'YELLOW',
    } as never;
    await h.webhook(quality);
    expect(await statusOf(key, template.id)).toBe('APPROVED');
    await h.webhook(statusWebhook(waba, id, 'IN_APPEAL', 1_800_000_400));
    expect(await statusOf(key, template.id)).toBe('IN_APPEAL');
    await h.webhook(statusWebhook(waba, id, 'LIMIT_EXCEEDED', 1_800_000_500));
    expect(await statusOf(key, template.id)).toBe('LIMIT_EXCEEDED');
  });

  it('applies a category update', async () => {
    const { key, template, waba } = await setup();
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: waba,
          time: 1_800_000_000,
          changes: [
            {
              field: 'template_category_update',
              value: {
                message_template_id: Number(template.platform_template_id),
                message_template_name: 'welcome',
                message_template_language: 'en-US',
                previous_category: 'MARKETING',
                new_category: 'UTILITY',
              },
            },
          ],
        },
      ],
    };
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await h.api('GET', `/v1/templates/${template.id}`, { key })).body.category).toBe('UTILITY');
  });

  it('applies every entry and change of a batched delivery', async () => {
    const one = await setup();
    const two = await setup();
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          ...statusWebhook(one.waba, one.template.platform_template_id, 'APPROVED', 1_800_000_000).entry[0]!,
          changes: [
            statusWebhook(one.waba, one.template.platform_template_id, 'APPROVED', 1).entry[0]!.changes[0],
            {
              field: 'template_category_update',
              value: {
                message_template_id: Number(one.template.platform_template_id),
                previous_category: 'MARKETING',
                new_category: 'UTILITY',
              },
            },
          ],
        },
        statusWebhook(two.waba, two.template.platform_template_id, 'REJECTED', 1_800_000_000, 'TAG_CONTENT_MISMATCH')
          .entry[0],
      ],
    };
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await h.api('GET', `/v1/templates/${one.template.id}`, { key: one.key })).body).toMatchObject({
      status: 'APPROVED',
      category: 'UTILITY',
    });
    expect((await h.api('GET', `/v1/templates/${two.template.id}`, { key: two.key })).body).toMatchObject({
      status: 'REJECTED',
      rejected_reason: 'TAG_CONTENT_MISMATCH',
    });
  });

  it('applies concurrent identical deliveries once', async () => {
    const { key, template, waba } = await setup();
    const id = template.platform_template_id;
    await h.webhook(statusWebhook(waba, id, 'APPROVED', 1_800_000_100));
    // Five copies of one PAUSED at once, and an APPROVED from before it: the result is PAUSED, recorded once.
    const paused = statusWebhook(waba, id, 'PAUSED', 1_800_000_200);
    const answers = await Promise.all([...Array.from({ length: 5 }, () => h.webhook(paused))]);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(await statusOf(key, template.id)).toBe('PAUSED');
    const rows = await h.database.db
      .selectFrom('processed_webhook_events')
      .select('event_key')
      .where('event_key', 'like', `ts:${id}:PAUSED:%`)
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('dedupe records', () => {
  it('are pruned after the retention period', async () => {
    const { template, waba } = await setup();
    await h.webhook(statusWebhook(waba, template.platform_template_id, 'APPROVED', 1_800_000_000));
    const count = async () =>
      (await h.database.db.selectFrom('processed_webhook_events').select('event_key').execute()).length;
    const before = await count();
    expect(before).toBeGreaterThan(0);
    await pruneHistory(h.database.db, new Date(), RETENTION_DEFAULTS);
    expect(await count()).toBe(before);
    const later = new Date(Date.now() + RETENTION_DEFAULTS.platformEventsMs + 60_000);
    expect((await pruneHistory(h.database.db, later, RETENTION_DEFAULTS)).platformEvents).toBe(before);
    expect(await count()).toBe(0);
  });
});
