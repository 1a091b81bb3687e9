import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../../src/lib/address-policy.ts';
import { createMediaFetcher } from '../../../src/messaging/media/media-fetcher.ts';
import { slowAnswer } from '../../helpers/wait.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 1)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 2)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 3)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(200, 4)]);

let server: Server;
let base: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = (type: string, body: Buffer, chunked = false) => {
      response.writeHead(
        200,
        chunked ? { 'content-type': type } : { 'content-type': type, 'content-length': body.length },
      );
      response.end(body);
    };
    switch (path) {
      case '/image.png':
        return send('image/png', PNG);
      case '/photo.jpg':
        return send('image/jpeg', JPEG);
      case '/doc.pdf':
        return send('application/pdf', PDF);
      case '/clip.mp4':
        return send('video/mp4', MP4);
      case '/notes.txt':
        return send('text/plain', Buffer.from('hello'));
      case '/html-as-png':
        return send('image/png', Buffer.from('<html>not an image</html>'));
      case '/png-called-video':
        return send('video/mp4', PNG);
      case '/huge-declared':
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(6 * 1024 * 1024) });
        return response.end(PNG);
      case '/huge-streamed': {
        response.writeHead(200, { 'content-type': 'image/png' });
        response.write(PNG);
        const chunk = Buffer.alloc(64 * 1024, 7);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!response.write(chunk)) return response.once('drain', pump);
          }
          response.end();
        };
        response.on('error', () => {});
        return pump();
      }
      case '/redirect':
        response.writeHead(302, { location: '/image.png' });
        return response.end();
      case '/loop':
        response.writeHead(302, { location: '/loop' });
        return response.end();
      case '/slow':
        return slowAnswer(2000, () => send('image/png', PNG));
      case '/stalls': {
        response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(MP4.length * 2) });
        response.on('error', () => {});
        return response.write(MP4);
      }
      default:
        response.writeHead(404);
        return response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fetcher = () => createMediaFetcher({ allowHosts: ['127.0.0.1'], timeoutMs: 500 });

describe('media fetching', () => {
  it.each([
    ['/image.png', 'image', 'png'],
    ['/photo.jpg', 'image', 'jpeg'],
    ['/doc.pdf', 'document', 'pdf'],
    ['/clip.mp4', 'video', 'mp4'],
    ['/notes.txt', 'document', 'text'],
  ] as const)('accepts %s as %s', async (path, kind, format) => {
    const result = await fetcher().check(`${base}${path}`, kind);
    expect(result).toMatchObject({ ok: true, format });
  });

  it.each([
    ['/html-as-png', 'image'],
    ['/png-called-video', 'video'],
    ['/image.png', 'video'],
    ['/doc.pdf', 'image'],
  ] as const)('refuses %s as %s with media_type_mismatch', async (path, kind) => {
    expect(await fetcher().check(`${base}${path}`, kind)).toMatchObject({ ok: false, code: 'media_type_mismatch' });
  });

  it('refuses a declared length over the limit without reading the body', async () => {
    expect(await fetcher().check(`${base}/huge-declared`, 'image')).toMatchObject({
      ok: false,
      code: 'media_too_large',
    });
  });

  it('stops reading an undeclared body as soon as it passes the limit', async () => {
    expect(await fetcher().check(`${base}/huge-streamed`, 'image')).toMatchObject({
      ok: false,
      code: 'media_too_large',
    });
  });

  it('follows a redirect, and gives up after three', async () => {
    expect(await fetcher().check(`${base}/redirect`, 'image')).toMatchObject({ ok: true, url: `${base}/image.png` });
    expect(await fetcher().check(`${base}/loop`, 'image')).toMatchObject({ ok: false, code: 'media_fetch_failed' });
  });

  it.each([
    ['a 404', '/missing'],
    ['a timeout', '/slow'],
  ])('reports %s as media_fetch_failed', async (_label, path) => {
    expect(await fetcher().check(`${base}${path}`, 'image')).toMatchObject({ ok: false, code: 'media_fetch_failed' });
  });

  it('refuses bad URLs and other schemes', async () => {
    expect(await fetcher().check('not a url', 'image')).toMatchObject({ ok: false, code: 'media_fetch_failed' });
    expect(await fetcher().check('file:///etc/passwd', 'image')).toMatchObject({
      ok: false,
      code: 'media_fetch_failed',
    });
  });

  it('refuses loopback and private addresses unless the host is allowed, including through DNS names', async () => {
    const strict = createMediaFetcher({ timeoutMs: 500 });
    const literal = await strict.check(`${base}/image.png`, 'image');
    expect(literal).toMatchObject({
      ok: false,
      code: 'media_fetch_failed',
      reason: expect.stringContaining('private'),
    });
    const port = new URL(base).port;
    const named = await strict.check(`http://localhost:${port}/image.png`, 'image');
    expect(named).toMatchObject({ ok: false, code: 'media_fetch_failed', reason: expect.stringContaining('private') });
    for (const address of ['10.1.2.3', '192.168.1.1', '169.254.169.254', '[::1]', '[::ffff:127.0.0.1]']) {
      expect((await strict.check(`http://${address}/x.png`, 'image')).ok).toBe(false);
    }
    expect(hits.get('/image.png') ?? 0).toBeGreaterThan(0);
  });

  it('checks redirect targets too: an allowed host cannot redirect to a refused one', async () => {
    const redirector = createServer((_request, response) => {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      response.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/start`;
    const result = await fetcher().check(url, 'image');
    expect(result).toMatchObject({ ok: false, code: 'media_fetch_failed', reason: expect.stringContaining('private') });
    await new Promise<void>((resolve) => redirector.close(() => resolve()));
  });
});

describe('media streaming', () => {
  const readAll = async (stream: ReadableStream<Uint8Array>) => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks);
  };

  it('streams the bytes with their type and length, following redirects', async () => {
    const result = await fetcher().stream(`${base}/redirect`);
    if (!result.ok) throw new Error(result.message);
    expect(result).toMatchObject({ mimeType: 'image/png', contentLength: PNG.length });
    expect(await readAll(result.body)).toEqual(PNG);
  });

  it('streams a large body without a length as it arrives', async () => {
    const result = await fetcher().stream(`${base}/huge-streamed`);
    if (!result.ok) throw new Error(result.message);
    expect(result.contentLength).toBeUndefined();
    expect((await readAll(result.body)).length).toBe(PNG.length + 8 * 1024 * 1024);
  });

  it('answers not_found for a 404 and unavailable for a timeout, a refused address or a bad URL', async () => {
    expect(await fetcher().stream(`${base}/missing`)).toMatchObject({ ok: false, reason: 'not_found' });
    expect(await fetcher().stream(`${base}/slow`)).toMatchObject({ ok: false, reason: 'unavailable' });
    expect(await createMediaFetcher({ timeoutMs: 500 }).stream(`${base}/image.png`)).toMatchObject({
      ok: false,
      reason: 'unavailable',
      message: expect.stringContaining('private'),
    });
    expect(await fetcher().stream('file:///etc/passwd')).toMatchObject({ ok: false, reason: 'unavailable' });
  });

  it('fails the stream when the server stops sending mid-file', async () => {
    const result = await fetcher().stream(`${base}/stalls`);
    if (!result.ok) throw new Error(result.message);
    await expect(readAll(result.body)).rejects.toThrow(/no data/);
  });
});

describe('address policy', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.0.0.8', true],
    ['172.20.1.1', true],
    ['192.168.0.1', true],
    ['169.254.1.1', true],
    ['100.64.0.1', true],
    ['::1', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['::ffff:10.0.0.1', true],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
    ['::ffff:8.8.8.8', false],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
