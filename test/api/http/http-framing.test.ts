// Errors the HTTP parser raises before any route (a header section too large, a malformed request) answer in the
// contract's `{detail}` shape over a real socket, and say `Connection: close` since the server closes the socket.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let port: number;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as { port: number }).port;
});
afterAll(() => h.close());

/** Writes raw bytes and collects everything the server sends until it closes the socket. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(raw);
    setTimeout(() => reject(new Error(`socket not closed; got ${received}`)), 10_000).unref();
  });
}

function parse(response: string) {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describe('errors of the HTTP parser', () => {
  it('431 for a header section over the limit, with Connection: close, in the {detail} shape', async () => {
    const response = parse(
      await exchange(
        `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: keep-alive\r\n\r\n`,
      ),
    );
    expect(response.status).toBe(431);
    expect(response.headers.connection).toBe('close');
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.body).toEqual({ detail: 'request_header_fields_too_large' });
  });

  it('400 for a malformed request, with Connection: close, in the {detail} shape', async () => {
    const response = parse(await exchange('GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'));
    expect(response.status).toBe(400);
    expect(response.headers.connection).toBe('close');
    expect(response.body).toEqual({ detail: 'bad_request' });
  });

  it('a bad percent-encoding over a real socket is a 400 {detail}, and the connection stays usable', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/contacts/%zz`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ detail: 'bad_request' });
    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
  });
});
