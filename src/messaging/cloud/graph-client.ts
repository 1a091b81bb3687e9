// A minimal Graph API caller: bearer auth, JSON in and out, a timeout, and no throwing. Every outcome is a value,
// because the adapter must turn network faults into results (the worker decides about retries, not exceptions).

export interface GraphClientOptions {
  baseUrl: string;
  token: string;
  fetch: typeof fetch;
  timeoutMs: number;
}

export type GraphOutcome =
  | { kind: 'answer'; status: number; body: unknown }
  | { kind: 'unreachable'; message: string; timedOut: boolean; notSent: boolean };

/** The Graph API error envelope `{error: {...}}`, read defensively. */
export interface GraphError {
  message: string;
  type?: string;
  code?: number;
  errorSubcode?: number;
  errorUserTitle?: string;
  errorUserMsg?: string;
  details?: string;
  fbtraceId?: string;
}

export interface GraphRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export async function callGraph(options: GraphClientOptions, request: GraphRequest): Promise<GraphOutcome> {
  const url = new URL(joinPath(options.baseUrl, request.path));
  for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, value);
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
  // A form (D294: a media upload) sets its own multipart type; anything else is JSON.
  const form = request.body instanceof FormData;
  if (request.body !== undefined && !form) headers['content-type'] = 'application/json';
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await options.fetch(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : form ? (request.body as FormData) : JSON.stringify(request.body),
      signal,
    });
    const text = await response.text();
    return { kind: 'answer', status: response.status, body: parseJson(text) };
  } catch (error) {
    const timedOut = signal.aborted;
    const message = timedOut ? `timed out after ${options.timeoutMs} ms` : describe(error);
    return { kind: 'unreachable', message, timedOut, notSent: !timedOut && neverConnected(error) };
  }
}

export function readGraphError(body: unknown): GraphError | undefined {
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const error = body.error;
  const data = isRecord(error.error_data) ? error.error_data : undefined;
  return {
    message: typeof error.message === 'string' ? error.message : 'unknown platform error',
    type: stringOrUndefined(error.type),
    code: numberOrUndefined(error.code),
    errorSubcode: numberOrUndefined(error.error_subcode),
    errorUserTitle: stringOrUndefined(error.error_user_title),
    errorUserMsg: stringOrUndefined(error.error_user_msg),
    details: stringOrUndefined(data?.details),
    fbtraceId: stringOrUndefined(error.fbtrace_id),
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function joinPath(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text; // a proxy's HTML error page, say: kept for the message, never parsed further
  }
}

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** True when the connection was never made, so the request cannot have reached the platform. */
function neverConnected(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
  return typeof cause?.code === 'string' && CONNECT_ERRORS.has(cause.code);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

// Codes arrive as numbers, but some proxies stringify them; accept a numeric string too.
function numberOrUndefined(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}
