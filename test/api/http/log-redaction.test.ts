// Secrets in request URLs never reach the log (D27): the webhook handshake's `hub.verify_token`, and any
// `oak_` value in a query string. The lines are captured from a real app's logger, the one the server builds.
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createMemoryRateLimitStore } from '../../../src/http/rate-limit.ts';
import { createLogger } from '../../../src/server.ts';
import { wire } from '../../../src/wiring.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const VERIFY_TOKEN = 'verify-token-that-must-not-be-logged';
const lines: string[] = [];
let app: FastifyInstance;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      callback();
    },
  });
  app = await buildApp(
    wire({
      database: database.database,
      rateLimitStore: createMemoryRateLimitStore(),
      webhookVerifyToken: VERIFY_TOKEN,
      log: createLogger({ logLevel: 'info' }, sink),
    }),
  );
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('request logs', () => {
  it('redact the handshake verify token and oak_ values in query strings, keeping the rest of the URL', async () => {
    const handshake = await app.inject({
      method: 'GET',
      url: `/webhooks/messaging?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=12345`,
    });
    expect(handshake.statusCode).toBe(200);
    const wrong = await app.inject({
      method: 'GET',
      url: '/webhooks/messaging?hub.mode=subscribe&hub%2Everify_token=a-wrong-guess&hub.challenge=1',
    });
    expect(wrong.statusCode).toBe(403);
    await app.inject({ method: 'GET', url: '/v1/contacts?api_key=oak_leakedKey123&q=ana' });
    await app.inject({ method: 'GET', url: '/v1/contacts?q=x%20oak_leakedKey456' });

    const text = lines.join('\n');
    const urls = lines.map((line) => JSON.parse(line).req?.url).filter(Boolean);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    expect(text).not.toContain(VERIFY_TOKEN);
    expect(text).not.toContain('a-wrong-guess');
    expect(text).not.toContain('oak_leakedKey');
    expect(urls).toContain('/webhooks/messaging?hub.mode=subscribe&hub.verify_token=[redacted]&hub.challenge=12345');
    expect(urls).toContain('/v1/contacts?api_key=[redacted]&q=ana');
  });
});
