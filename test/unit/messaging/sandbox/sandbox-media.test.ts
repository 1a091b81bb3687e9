// The sandbox's media ids and download (decisions §15): the id carries the file's URL and announced type, and a
// download asks the connected service's fetcher for the URL, answering with the announced type.
import { afterEach, describe, expect, it } from 'vitest';
import type { MediaDownload } from '../../../../src/messaging/platform.ts';
import {
  createSandboxPlatform,
  readSandboxMediaId,
  type SandboxPlatform,
  sandboxMediaId,
} from '../../../../src/messaging/sandbox/sandbox-platform.ts';
import { manualClock } from '../../../helpers/clock.ts';

let sandbox: SandboxPlatform | undefined;
afterEach(() => sandbox?.close());

function start(fetchMedia?: (url: string) => Promise<MediaDownload>) {
  sandbox = createSandboxPlatform({ clock: manualClock(), nameCooldownMs: 60_000 });
  sandbox.connect({
    appSecret: 's',
    deliver: async () => {},
    businessAccountOf: async () => undefined,
    lastInboundAt: async () => undefined,
    ...(fetchMedia ? { fetchMedia } : {}),
  });
  return sandbox;
}

const bytes = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });

describe('sandbox media', () => {
  it('round-trips the URL and type through the media id, and refuses anything else', () => {
    const file = { url: 'https://files.example.com/a b/ü.pdf?x=1', mimeType: 'application/pdf' };
    expect(readSandboxMediaId(sandboxMediaId(file))).toEqual(file);
    for (const id of [
      '1003383421387256',
      'sbxmedia.',
      'sbxmedia.!!!',
      `sbxmedia.${Buffer.from('{"u":1}').toString('base64url')}`,
    ]) {
      expect(readSandboxMediaId(id)).toBeUndefined();
    }
  });

  it('downloads through the connected fetcher, with the announced type', async () => {
    const asked: string[] = [];
    const platform = start(async (url) => {
      asked.push(url);
      return { ok: true, mimeType: 'application/octet-stream', contentLength: 5, body: bytes('hello') };
    });
    const id = sandboxMediaId({ url: 'http://127.0.0.1:9/voice', mimeType: 'audio/ogg' });
    const download = await platform.downloadMedia({ phoneNumberId: '1', platformMediaId: id });
    if (!download.ok) throw new Error(download.message);
    expect(download).toMatchObject({ mimeType: 'audio/ogg', contentLength: 5 });
    expect(await new Response(download.body).text()).toBe('hello');
    expect(asked).toEqual(['http://127.0.0.1:9/voice']);
  });

  it('answers not_found for an id it did not make, the fetcher’s failure as it is, and unavailable unconnected', async () => {
    const failing = start(async () => ({ ok: false, reason: 'not_found', message: 'the server answered 404' }));
    expect(await failing.downloadMedia({ phoneNumberId: '1', platformMediaId: '42' })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
    const id = sandboxMediaId({ url: 'http://127.0.0.1:9/gone', mimeType: 'image/png' });
    expect(await failing.downloadMedia({ phoneNumberId: '1', platformMediaId: id })).toEqual({
      ok: false,
      reason: 'not_found',
      message: 'the server answered 404',
    });
    failing.close();
    const unconnected = start();
    expect(await unconnected.downloadMedia({ phoneNumberId: '1', platformMediaId: id })).toMatchObject({
      ok: false,
      reason: 'unavailable',
    });
  });
});
