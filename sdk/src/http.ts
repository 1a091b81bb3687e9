// The transport: fetch only (Node 20+ and browsers), JSON in and out, typed errors, and 429 handling that honours
// `Retry-After` a bounded number of times (contract, Limits: a 429 carries `Retry-After`, always 1 s here).
import { ConnectionError, type ErrorDetail, errorFor } from './errors.ts';

export interface TransportOptions {
  /** An `oak_…` key; not needed with `session`. */
  apiKey?: string;
  /**
   * A browser session instead of a key (the console, decisions §17): cookies go with every request
   * (`credentials: 'same-origin'`), no Authorization header, and every change carries `X-CSRF-Token` from `csrfToken`.
   */
  session?: { csrfToken: () => string | undefined };
  /** Default `http://127.0.0.1:8080`, the address `npm start` listens on. */
  baseUrl?: string;
  /** How many times a 429 is retried after waiting `Retry-After`; default 2, 0 turns retries off. */
  maxRetries?: number;
  /** A 429 asking to wait longer than this (ms) is not retried but thrown as RateLimitError; default 60000. */
  maxRetryDelayMs?: number;
  /** Another fetch (a proxy agent, a test double); the global fetch by default. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

export interface RequestOptions {
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  keepalive?: boolean | undefined;
}

/** Per-call options every method takes last. */
export interface CallOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** fetch's `keepalive`: the request outlives the page that sends it (a small body, as the page unloads). */
  keepalive?: boolean;
}

const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** Seconds or an HTTP date (RFC 9110 §10.2.3) to milliseconds; 1 s when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  if (value === null) return 1000;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}

/** Array values as repeated keys (decisions §2); undefined and null are left out. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, String(item));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #session: TransportOptions['session'];
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #headers: Record<string, string>;

  constructor(options: TransportOptions) {
    if (!options.apiKey && !options.session) throw new TypeError('apiKey is required (an oak_… key)');
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#session = options.session;
    // Bound to globalThis: browsers throw "Illegal invocation" on a detached fetch.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.#headers = options.headers ?? {};
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.#send(method, path, options, 'application/json');
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * A successful answer as it arrives, its body unread (a file, decisions §15): the caller reads or cancels
   * `response.body`. Errors and 429s are handled as for `request`.
   */
  stream(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    return this.#send(method, path, options, '*/*');
  }

  async #send(method: string, path: string, options: RequestOptions, accept: string): Promise<Response> {
    const url = `${this.baseUrl}${path}${queryString(options.query)}`;
    const headers: Record<string, string> = {
      accept,
      ...this.#headers,
      ...options.headers,
    };
    const init: RequestInit = { method, headers };
    if (this.#session) {
      init.credentials = 'same-origin';
      const csrf = this.#session.csrfToken();
      if (method !== 'GET' && method !== 'HEAD' && csrf) headers['x-csrf-token'] = csrf;
    } else headers.authorization = `Bearer ${this.#apiKey}`;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    if (options.signal) init.signal = options.signal;
    if (options.keepalive) init.keepalive = true;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#fetch(url, init);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new ConnectionError(`${method} ${url} failed: ${(error as Error).message}`, { cause: error });
      }
      if (response.ok) return response;
      // A 429 is refused before anything runs, so a retry is safe for every method; a send keeps its key.
      if (response.status === 429 && attempt < this.#maxRetries) {
        const wait = retryAfterMs(response.headers.get('retry-after'));
        if (wait <= this.#maxRetryDelayMs) {
          await response.body?.cancel();
          await sleep(wait, options.signal);
          continue;
        }
      }
      throw errorFor(response.status, await readDetail(response), response.headers);
    }
  }
}

async function readDetail(response: Response): Promise<ErrorDetail> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { detail?: ErrorDetail };
    if (body && body.detail !== undefined) return body.detail;
  } catch {
    // Not JSON (a proxy's error page): the status alone says what happened.
  }
  return `http_${response.status}`;
}
