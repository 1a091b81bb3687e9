// The in-flight lock of an idempotency key is a short lease renewed while its request runs: a request that is
// still working after several lease lengths keeps its key (a concurrent retry is 409 in flight), and queues once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_FLIGHT_LEASE_SECONDS } from '../../../src/http/idempotency.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { IMAGE_HEADER_WITH_BUTTON, phones, sender } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

let h: Harness;
let media: Server;
let mediaBase: string;
let release: () => void = () => {};
let mediaRequests = 0;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  // Answers only when the test releases it: the send holds its key meanwhile.
  media = createServer((_request, response) => {
    mediaRequests++;
    release = () => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      response.end(PNG);
    };
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
});
afterAll(async () => {
  media.closeAllConnections();
  await new Promise<void>((resolve) => media.close(() => resolve()));
  await h.close();
});

describe('the in-flight lease', () => {
  it('is renewed while the request runs: a retry after more than a lease length is still 409 in flight', async () => {
    const { key, template } = await sender(h, { components: IMAGE_HEADER_WITH_BUTTON });
    const [phone] = phones(1);
    const body = {
      recipients: [
        { phone, variables: { 'body.1': 'A-1' }, url_suffixes: { '0': 'A-1' }, header_media_url: `${mediaBase}/x.png` },
      ],
    };
    const send = () =>
      h.api('POST', `/v1/templates/${template.id}/send`, { key, body, headers: { 'idempotency-key': 'lease-1' } });
    const first = send();
    await waitUntil(() => mediaRequests > 0, { message: 'the media request' });
    // More than a lease length since the claim, as the database counts it: only renewals still hold the key.
    await waitUntil(
      async () => {
        const { rows } = await sql<{ past: boolean }>`
          select now() > created_at + make_interval(secs => ${IN_FLIGHT_LEASE_SECONDS + 1}) as past
          from idempotency_keys where key = 'lease-1'`.execute(h.database.db);
        return rows[0]?.past;
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the first lease to run out' },
    );
    const retry = await send();
    expect(retry.status).toBe(409);
    expect(retry.body).toEqual({ detail: { code: 'idempotency_key_in_flight' } });
    release();
    const done = await first;
    expect(done.status).toBe(202);
    const replay = await send();
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(done.body.id);
    expect((await h.api('GET', '/v1/broadcasts', { key })).body.items).toHaveLength(1);
  });
});
