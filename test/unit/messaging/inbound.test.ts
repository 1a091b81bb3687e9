// The inbound processor reads the platform's callbacks through the port's reader (D333), not through an adapter's
// own functions: whatever the reader says about a signature and a body is what the processor answers.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/lib/clock.ts';
import { createInboundProcessor } from '../../../src/messaging/inbound.ts';
import type { InboundEntry, InboundReader } from '../../../src/messaging/platform.ts';

function processorWith(reader: InboundReader) {
  return createInboundProcessor({
    // No entry reaches the database in these cases.
    db: undefined as never,
    clock: systemClock,
    appSecret: 'app-secret',
    log: { warn() {} },
    directory: { organizationOfAccount: async () => undefined, liveChannel: async () => undefined },
    handlers: {},
    reader,
  });
}

describe('the inbound processor', () => {
  const seen: { signature: string; secret: string; body: string }[] = [];
  const reader: InboundReader = {
    verify(rawBody, signatureHeader, appSecret) {
      seen.push({ signature: signatureHeader, secret: appSecret, body: rawBody.toString('utf8') });
      return signatureHeader === 'signed-by-the-reader';
    },
    parse: (rawBody): InboundEntry[] | undefined => (rawBody.toString('utf8') === 'not json' ? undefined : []),
  };
  const processor = processorWith(reader);

  it("verifies with the platform's reader and the app secret", async () => {
    expect(await processor.process(Buffer.from('{}'), 'signed-by-the-reader')).toEqual({
      ok: true,
      events: 0,
      applied: 0,
      stale: 0,
      duplicates: 0,
      unmatched: 0,
    });
    expect(await processor.process(Buffer.from('{}'), 'sha256=00')).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(seen).toEqual([
      { signature: 'signed-by-the-reader', secret: 'app-secret', body: '{}' },
      { signature: 'sha256=00', secret: 'app-secret', body: '{}' },
    ]);
  });

  it("parses with the platform's reader: a body it cannot read is invalid_json", async () => {
    expect(await processor.process(Buffer.from('not json'), 'signed-by-the-reader')).toEqual({
      ok: false,
      reason: 'invalid_json',
    });
  });

  it('asks nothing without a signature header', async () => {
    const before = seen.length;
    expect(await processor.process(Buffer.from('{}'), undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(seen.length).toBe(before);
  });
});
