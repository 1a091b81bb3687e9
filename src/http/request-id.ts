import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Random bytes are drawn 4 KiB at a time and handed out 12 by 12: one call into the random source per 341
// requests instead of one per request (per-request work the read path does not need).
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 341);
let offset = pool.length;

function randomHex(): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

/** Keeps a caller's X-Request-Id when it is safe to log, otherwise makes one. */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  return `req_${randomHex()}`;
}
