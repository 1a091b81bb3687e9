// A file host on 127.0.0.1 for the browser suite: the media a message, a template header or a carousel card points
// at, which the server fetches (with MEDIA_FETCH_ALLOW_HOSTS=127.0.0.1). Unknown paths answer 404.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FileHost {
  url: string;
  close(): Promise<void>;
}

/** `fileFor(path)` gives a path's content type and bytes, or undefined for a 404. */
export async function startFileHost(
  fileFor: (path: string) => { type: string; body: Buffer } | undefined,
): Promise<FileHost> {
  const server = createServer((request, response) => {
    const file = fileFor(request.url ?? '/');
    if (!file) {
      response.writeHead(404);
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length });
    response.end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
