// The SDK's conversations.downloadMedia against a live server (decisions §15): the file as an unread stream with its
// type, size and name; the API's errors as the SDK's typed errors.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, CrmClient, NotFoundError } from '../../sdk/src/index.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { phones } from '../helpers/sends.ts';

const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200_000, 7)]);
let h: Harness;
let baseUrl: string;
let files: Server;
let filesBase: string;
beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
  files = createServer((request, response) => {
    if (request.url === '/invoice') {
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': PDF.length });
      return response.end(PDF);
    }
    response.writeHead(404);
    response.end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesBase = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => files.close(() => resolve()));
  await h.close();
});

describe('conversations.downloadMedia', () => {
  it('answers the file as a stream with its type, size and name, and typed errors', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const from = phones(1)[0];
    for (const media_url of [`${filesBase}/invoice`, `${filesBase}/gone`]) {
      const delivered = await h.admin('POST', '/sandbox/inbound', {
        channel_id: account.numbers[0].id,
        from,
        type: 'document',
        media_url,
        filename: 'Factura nº 7.pdf',
      });
      expect(delivered.status).toBe(200);
    }
    await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from, text: 'thanks' });
    const client = new CrmClient({ apiKey: key, baseUrl });
    const conversation = (await client.conversations.list()).items[0];
    if (!conversation) throw new Error('no conversation');
    const [text, gone, invoice] = (await client.conversations.messages(conversation.id)).items;
    if (!text || !gone || !invoice) throw new Error('missing messages');
    expect(invoice.media).toEqual({
      mime_type: 'application/pdf',
      filename: 'Factura nº 7.pdf',
      caption: null,
      url: null,
    });

    const file = await client.conversations.downloadMedia(conversation.id, invoice.id);
    expect(file.contentType).toBe('application/pdf');
    expect(file.contentLength).toBe(PDF.length);
    expect(file.filename).toBe('Factura nº 7.pdf');
    let read = 0;
    const chunks: Uint8Array[] = [];
    for await (const chunk of file.body) {
      chunks.push(chunk);
      read += chunk.length;
    }
    expect(read).toBe(PDF.length);
    expect(Buffer.concat(chunks).equals(PDF)).toBe(true);

    await expect(client.conversations.downloadMedia(conversation.id, text.id)).rejects.toBeInstanceOf(NotFoundError);
    const failure = await client.conversations.downloadMedia(conversation.id, gone.id).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(502);
    expect((failure as ApiError).detail).toMatchObject({ code: 'media_not_found' });
  });
});
