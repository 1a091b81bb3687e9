// Webhook signing secrets at rest (D148): sealed with AES-256-GCM under a SECRETS_KEY key whose id is
// stored beside the ciphertext. A dump of every table reveals no secret, deliveries still verify with the
// `standardwebhooks` library, rows written in clear before migration 0018 are sealed at start, and a key rotation
// reseals under the new key while the old one still opens what it sealed.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyringText, type Keyring, parseKeyring } from '../../../src/lib/secrets-box.ts';
import { resealWebhookSecrets } from '../../../src/modules/webhook-endpoints/endpoint-secrets.ts';
import { createWebhookDeliverer } from '../../../src/worker/webhook-deliveries.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [h, receiver] = await Promise.all([startHarness({ unlimited: true }), startWebhookReceiver()]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

let paths = 0;
async function endpoint(key: string) {
  const path = `/secrets/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events: ['*'] },
  });
  expect(created.status).toBe(201);
  return { ...created.body, path } as { id: string; secret: string; path: string };
}

/** Every row of every table of the database, as text: what a dump (or a stolen backup) shows. */
async function dump(): Promise<string> {
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(h.database.db);
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(h.database.db);
    parts.push(...rows.rows.map((row) => row.row));
  }
  return parts.join('\n');
}

/** A secret as it could leak: whole, or the base64 key after `whsec_`, or that key's bytes in hex. */
function leaks(text: string, secret: string): string[] {
  const body = secret.slice('whsec_'.length);
  const forms = [secret, body, Buffer.from(body, 'base64').toString('hex')];
  return forms.filter((form) => text.includes(form));
}

async function pingAndVerify(key: string, hook: { id: string; path: string }, secrets: string[]) {
  const before = receiver.at(hook.path).length;
  expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
  await h.deliveries.drain();
  const [request] = (await receiver.waitFor(hook.path, before + 1)).slice(before);
  for (const secret of secrets) expect(verify(secret, request as any).type).toBe('ping');
}

describe('signing secrets at rest', () => {
  it('a dump of the database reveals no secret, current or rotated out; deliveries still verify', async () => {
    const { org, key } = await h.createOrg();
    const plain = await endpoint(key);
    const rotating = await endpoint(key);
    const rotated = (await h.api('POST', `/v1/webhook-endpoints/${rotating.id}/rotate-secret`, { key })).body;
    expect(rotated.secret).toMatch(/^whsec_/);

    const text = await dump();
    expect(text).toContain(plain.id);
    for (const secret of [plain.secret, rotating.secret, rotated.secret]) expect(leaks(text, secret)).toEqual([]);
    const rows = await h.database.db
      .selectFrom('webhook_endpoints')
      .select(['secrets_key_id', 'previous_secret'])
      .where('org_id', '=', org.id)
      .execute();
    for (const row of rows) expect(row.secrets_key_id).toBe(h.wiring.keyring.currentId);

    await pingAndVerify(key, plain, [plain.secret]);
    // During the rotation's overlap the delivery carries both signatures: each secret verifies it.
    await pingAndVerify(key, rotating, [rotated.secret, rotating.secret]);
  });

  it('rows written in clear before the migration are sealed at start and still verify', async () => {
    const { org, key } = await h.createOrg();
    const hook = await endpoint(key);
    // An endpoint as migration 0018 found it: the secret in clear, no key id.
    await h.database.db
      .updateTable('webhook_endpoints')
      .set({ secret: hook.secret, previous_secret: null, secrets_key_id: null })
      .where('org_id', '=', org.id)
      .where('id', '=', hook.id)
      .execute();
    expect(leaks(await dump(), hook.secret)).not.toEqual([]);
    await pingAndVerify(key, hook, [hook.secret]);

    expect(await resealWebhookSecrets(h.database.db, h.wiring.keyring)).toBeGreaterThanOrEqual(1);
    expect(leaks(await dump(), hook.secret)).toEqual([]);
    await pingAndVerify(key, hook, [hook.secret]);
    // Sealing again finds nothing left to do.
    expect(await resealWebhookSecrets(h.database.db, h.wiring.keyring)).toBe(0);
  });

  it('a key rotation reseals under the new key; a process without the key cannot sign', async () => {
    const { org, key } = await h.createOrg();
    const hook = await endpoint(key);
    const next = parseKeyring(generateKeyringText());
    // SECRETS_KEY="next,current": the new key seals, the old one still opens.
    const rotation: Keyring = {
      currentId: next.currentId,
      keys: new Map([...next.keys, ...h.wiring.keyring.keys]),
    };
    expect(await resealWebhookSecrets(h.database.db, rotation)).toBeGreaterThanOrEqual(1);
    const row = await h.database.db
      .selectFrom('webhook_endpoints')
      .select('secrets_key_id')
      .where('org_id', '=', org.id)
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(row.secrets_key_id).toBe(next.currentId);

    const deliver = async (keyring: Keyring) => {
      const deliverer = createWebhookDeliverer({
        db: h.database.db,
        log: h.app.log,
        keyring,
        allowHosts: ['127.0.0.1'],
        options: { retryScheduleMs: [] },
      });
      try {
        expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
        while ((await deliverer.runOnce()) > 0);
      } finally {
        await deliverer.stop();
      }
      return (await h.api('GET', `/v1/webhook-endpoints/${hook.id}/deliveries?limit=1`, { key })).body.items[0];
    };
    // Only the new key, after the old one is dropped from SECRETS_KEY: signs and verifies.
    expect(await deliver(next)).toMatchObject({ status: 'succeeded' });
    expect(verify(hook.secret, receiver.at(hook.path).at(-1) as any).type).toBe('ping');
    // Only the old key: nothing is sent, the attempt fails and says why.
    const sent = receiver.at(hook.path).length;
    expect(await deliver(h.wiring.keyring)).toMatchObject({
      status: 'failed',
      last_error: 'signing secret unavailable (SECRETS_KEY)',
    });
    expect(receiver.at(hook.path)).toHaveLength(sent);
  });
});
