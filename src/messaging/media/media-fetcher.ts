// Fetches a media URL the way the platform will: publicly reachable, of the header's type, within its size limit.
// Guards: http(s) only; every address a host resolves to must be public (checked at connect time, so a DNS answer
// cannot change between the check and the connection) unless the host is allowed; a deadline for the whole fetch;
// at most 3 redirects, each checked again; the body is streamed and abandoned as soon as it passes the limit.
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { AddressRefused, checkLiteralHost, guardedLookup } from '../../lib/address-policy.ts';
import type { MediaDownload } from '../platform.ts';
import { declaredLength, withIdleTimeout } from './media-stream.ts';
import { declaredKind, MEDIA_SIZE_LIMITS, type MediaKind, sniff } from './media-types.ts';

export type MediaCheck =
  | { ok: true; url: string; contentType: string | undefined; size: number; format: string }
  | { ok: false; code: 'media_too_large' | 'media_type_mismatch' | 'media_fetch_failed'; reason: string };

export interface MediaFetcher {
  check(url: string, kind: MediaKind): Promise<MediaCheck>;
  /**
   * The file at `url`, streamed under the same rules (address policy, redirects, a deadline for the answer and for
   * each wait on a chunk): what the media endpoint answers for outbound media, and where the sandbox gets inbound
   * files. A 404 or 410 is `not_found`; any other failure `unavailable`.
   */
  stream(url: string): Promise<MediaDownload>;
}

export interface MediaFetcherOptions {
  allowHosts?: readonly string[];
  timeoutMs?: number;
  maxRedirects?: number;
  sizeLimits?: Partial<Record<MediaKind, number>>;
}

class FetchFailure extends Error {
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

const SNIFF_BYTES = 16;

export function createMediaFetcher(options: MediaFetcherOptions = {}): MediaFetcher {
  const allowHosts = options.allowHosts ?? [];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRedirects = options.maxRedirects ?? 3;
  const limits = { ...MEDIA_SIZE_LIMITS, ...options.sizeLimits };

  function get(url: URL, signal: AbortSignal): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return Promise.reject(new FetchFailure(`unsupported URL scheme ${url.protocol}`));
    }
    let allowed: boolean;
    try {
      ({ allowed } = checkLiteralHost(url.hostname, allowHosts));
    } catch (error) {
      return Promise.reject(new FetchFailure((error as AddressRefused).message));
    }
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.get(url, { signal, lookup: guardedLookup(allowed), headers: { accept: '*/*' } }, resolve);
      request.on('error', reject);
    });
  }

  async function open(start: string, signal: AbortSignal) {
    let url: URL;
    try {
      url = new URL(start);
    } catch {
      throw new FetchFailure('not a valid URL');
    }
    for (let redirects = 0; ; redirects++) {
      const response = await get(url, signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (redirects >= maxRedirects) throw new FetchFailure(`more than ${maxRedirects} redirects`);
        url = new URL(response.headers.location, url);
        continue;
      }
      if (status < 200 || status >= 300) {
        response.resume();
        throw new FetchFailure(`the server answered ${status}`, status);
      }
      return { response, finalUrl: url.toString() };
    }
  }

  function failureReason(error: unknown, signal: AbortSignal): string {
    return error instanceof FetchFailure || error instanceof AddressRefused
      ? error.message
      : signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : `could not fetch (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }

  return {
    async stream(url) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new FetchFailure(`no answer within ${timeoutMs} ms`)), timeoutMs);
      try {
        const { response } = await open(url, controller.signal);
        const body = Readable.toWeb(response) as ReadableStream<Uint8Array>;
        const contentLength = declaredLength(response.headers['content-length']);
        return {
          ok: true,
          mimeType: response.headers['content-type'] ?? 'application/octet-stream',
          ...(contentLength !== undefined ? { contentLength } : {}),
          body: withIdleTimeout(body, timeoutMs, (reason) => controller.abort(reason)),
        };
      } catch (error) {
        const status = error instanceof FetchFailure ? error.status : undefined;
        const reason = status === 404 || status === 410 ? 'not_found' : 'unavailable';
        return { ok: false, reason, message: failureReason(error, controller.signal) };
      } finally {
        clearTimeout(timer);
      }
    },

    async check(url, kind) {
      const limit = limits[kind];
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new FetchFailure(`no answer within ${timeoutMs} ms`)), timeoutMs);
      try {
        const { response, finalUrl } = await open(url, controller.signal);
        const contentType = response.headers['content-type'];
        const declaredLength = Number(response.headers['content-length']);
        if (Number.isFinite(declaredLength) && declaredLength > limit) {
          response.destroy();
          return {
            ok: false,
            code: 'media_too_large',
            reason: `${declaredLength} bytes; the ${kind} limit is ${limit}`,
          };
        }
        let size = 0;
        let head = Buffer.alloc(0);
        for await (const chunk of response as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk]).subarray(0, SNIFF_BYTES);
          if (size > limit) {
            response.destroy();
            return { ok: false, code: 'media_too_large', reason: `over ${limit} bytes; the ${kind} limit` };
          }
          // A declared length within the limit is trusted once the leading bytes are known.
          if (Number.isFinite(declaredLength) && head.length >= SNIFF_BYTES) {
            response.destroy();
            size = declaredLength;
            break;
          }
        }
        const sniffed = sniff(head);
        const declared = declaredKind(contentType);
        const plainTextDocument = kind === 'document' && /^text\/(plain|csv)/i.test(contentType ?? '');
        if (declared !== kind || (!plainTextDocument && sniffed?.kind !== kind)) {
          return {
            ok: false,
            code: 'media_type_mismatch',
            reason: `expected ${kind}, got ${contentType ?? 'no content type'}${sniffed ? ` (${sniffed.format} content)` : ''}`,
          };
        }
        return { ok: true, url: finalUrl, contentType, size, format: sniffed?.format ?? 'text' };
      } catch (error) {
        return { ok: false, code: 'media_fetch_failed', reason: failureReason(error, controller.signal) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
