// The sandbox platform on its own: magic phones, name cool-down, and signed platform-shaped webhooks.
import { afterEach, describe, expect, it } from 'vitest';
import { parseWebhook, parseWebhookJson, verifySignature } from '../../../../src/messaging/cloud/webhook-parser.ts';
import type { PlatformEvent, TemplateSubmission } from '../../../../src/messaging/platform.ts';
import { createSandboxPlatform, type SandboxPlatform } from '../../../../src/messaging/sandbox/sandbox-platform.ts';
import { templateStatusFor } from '../../../../src/modules/templates/platform-template.handlers.ts';
import { manualClock } from '../../../helpers/clock.ts';
import { quietSpell, waitUntil } from '../../../helpers/wait.ts';

const secret = 'unit-secret';
const waba = '102290129340398';
const phoneNumberId = '106540352242922';

let sandbox: SandboxPlatform | undefined;
afterEach(() => sandbox?.close());

function start(options: { autoReviewMs?: number; autoReportsMs?: number; rememberMessages?: number } = {}) {
  const clock = manualClock();
  const delivered: { events: PlatformEvent[]; time: number }[] = [];
  const platform = createSandboxPlatform({ clock, nameCooldownMs: 60_000, ...options });
  platform.connect({
    appSecret: secret,
    async deliver(rawBody, signature) {
      expect(verifySignature(rawBody, signature, secret)).toBe(true);
      const json = parseWebhookJson(rawBody.toString('utf8')) as { entry: { time: number }[] };
      delivered.push({ events: parseWebhook(json), time: json.entry[0]!.time });
    },
    businessAccountOf: async (id) => (id === phoneNumberId ? waba : undefined),
    lastInboundAt: async () => undefined,
  });
  sandbox = platform;
  return { platform, clock, delivered };
}

const submission: TemplateSubmission = {
  businessAccountId: waba,
  name: 'promo',
  language: 'en_US',
  category: 'MARKETING',
  components: [{ type: 'BODY', text: 'Hi' }],
  parameterFormat: 'positional',
};

const message = (to: string) => ({ phoneNumberId, to, templateName: 'promo', language: 'en_US', components: [] });

const until = (check: () => boolean) => waitUntil(check, { timeoutMs: 5_000, intervalMs: 5 });

describe('sendTemplate', () => {
  it('fails …0404 as not on the network and …0500 as a generic error; accepts anything else', async () => {
    const { platform } = start();
    expect(await platform.sendTemplate(message('+15551230404'))).toMatchObject({
      ok: false,
      reason: 'not_on_network',
      code: 131026,
      retryable: false,
    });
    expect(await platform.sendTemplate(message('+15551230500'))).toMatchObject({
      ok: false,
      reason: 'platform_error',
      retryable: false,
    });
    const accepted = await platform.sendTemplate(message('+15551234567'));
    expect(accepted).toMatchObject({ ok: true, platformMessageId: expect.stringMatching(/^wamid\./) });
    if (accepted.ok) {
      expect(platform.acceptedMessage(accepted.platformMessageId)).toEqual({
        businessAccountId: waba,
        phoneNumberId,
        to: '+15551234567',
      });
    }
  });

  it('keeps at most rememberMessages accepted messages, the oldest leaving first, and none at 0 (a worker)', async () => {
    const { platform } = start({ rememberMessages: 2 });
    const ids: string[] = [];
    for (const to of ['+15551230001', '+15551230002', '+15551230003']) {
      const accepted = await platform.sendTemplate(message(to));
      if (accepted.ok) ids.push(accepted.platformMessageId);
    }
    expect(ids.map((id) => platform.acceptedMessage(id)?.to)).toEqual([undefined, '+15551230002', '+15551230003']);
    platform.close();
    const { platform: forgetful } = start({ rememberMessages: 0, autoReportsMs: 5 });
    const accepted = await forgetful.sendTemplate(message('+15551234567'));
    expect(accepted.ok && forgetful.acceptedMessage(accepted.platformMessageId)).toBeUndefined();
  });

  it('reports delivered, then read, as signed status webhooks when auto reports are on', async () => {
    const { platform, delivered } = start({ autoReportsMs: 5 });
    const accepted = await platform.sendTemplate(message('+15551234567'));
    await until(() => delivered.length >= 2);
    expect(delivered.map(({ events }) => events[0])).toEqual([
      expect.objectContaining({ kind: 'message_status', status: 'delivered', recipient: '+15551234567' }),
      expect.objectContaining({ kind: 'message_status', status: 'read' }),
    ]);
    expect(accepted.ok && delivered[0]!.events[0]).toMatchObject({
      platformMessageId: accepted.ok && accepted.platformMessageId,
    });
  });
});

describe('templates', () => {
  it('refuses a name in its cool-down after a delete, and a live duplicate', async () => {
    const { platform, clock } = start();
    const first = await platform.submitTemplate(submission);
    expect(first).toMatchObject({ ok: true, status: 'PENDING', category: 'MARKETING' });
    expect(await platform.submitTemplate(submission)).toMatchObject({ ok: false, code: 100 });
    if (!first.ok) return;
    await platform.deleteTemplate({
      businessAccountId: waba,
      name: 'promo',
      platformTemplateId: first.platformTemplateId,
    });
    const cooling = await platform.submitTemplate(submission);
    expect(cooling).toMatchObject({ ok: false, code: 100 });
    expect(!cooling.ok && cooling.reason).toContain('being deleted');
    // Other languages of the name are not affected; after the cool-down the name is free again.
    expect(await platform.submitTemplate({ ...submission, language: 'es' })).toMatchObject({ ok: true });
    clock.advance(60_000);
    expect(await platform.submitTemplate(submission)).toMatchObject({ ok: true });
  });

  it('approves by itself when auto review is on, with strictly increasing entry times per template', async () => {
    const { platform, delivered } = start({ autoReviewMs: 5 });
    const result = await platform.submitTemplate(submission);
    await until(() => delivered.length >= 1);
    expect(delivered[0]!.events).toEqual([
      expect.objectContaining({ kind: 'template_status', event: 'APPROVED', businessAccountId: waba }),
    ]);
    if (!result.ok) return;
    const event: PlatformEvent = {
      kind: 'template_status',
      businessAccountId: waba,
      platformTemplateId: result.platformTemplateId,
      event: 'PAUSED',
    };
    await platform.deliver([event]);
    await platform.deliver([{ ...event, event: 'APPROVED' }]);
    const times = delivered.map((delivery) => delivery.time);
    expect(times[1]).toBeGreaterThan(times[0]!);
    expect(times[2]).toBeGreaterThan(times[1]!);
  });

  it('delivers nothing after close', async () => {
    const { platform, delivered } = start({ autoReviewMs: 5 });
    await platform.submitTemplate(submission);
    platform.close();
    await quietSpell(30); // six review intervals
    expect(delivered).toEqual([]);
  });
});

describe('templateStatusFor', () => {
  it.each([
    ['APPROVED', 'APPROVED'],
    ['rejected', 'REJECTED'],
    ['PAUSED', 'PAUSED'],
    ['REINSTATED', 'APPROVED'],
    ['UNARCHIVED', 'APPROVED'],
    ['FLAGGED', undefined],
    ['LOCKED', undefined],
    ['PENDING_DELETION', 'PENDING_DELETION'],
  ])('maps %s to %s', (event, status) => {
    expect(templateStatusFor(event)).toBe(status);
  });
});
