// Whether the database answers. A connection-level failure starts a probe; when the probe fails too, the database
// is unavailable: requests then get a fast 503 and the worker pauses, while the probe retries every
// PROBE_INTERVAL_MS and marks it available again as soon as one statement gets through (decisions D24: everything works again within 3 s of the database coming back).

const PROBE_INTERVAL_MS = 250;

// Node's socket errors and PostgreSQL's "connection exception" class (08) and shutdown/overload codes.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);
// node-postgres reports a lost or silent server with these messages and no code. Not its "timeout exceeded when
// trying to connect": that is a wait in its pool's queue, a busy pool and not an unreachable database (pool-gate.ts).
const UNREACHABLE_MESSAGES =
  /Connection terminated|connection timeout|Query read timeout|not queryable|Connection refused/i;

function code(error: unknown): string | undefined {
  const value = (error as { code?: unknown } | null)?.code;
  return typeof value === 'string' ? value : undefined;
}

/** A failure of the connection to the database (not of the statement): the database is unreachable. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const errorCode = code(error);
  if (errorCode && (UNREACHABLE_CODES.has(errorCode) || errorCode.startsWith('08'))) return true;
  if (UNREACHABLE_MESSAGES.test(error.message)) return true;
  // AggregateError (several addresses refused) and wrapped causes.
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  return error.cause !== undefined && error.cause !== error && isConnectionFailure(error.cause);
}

/** A failure that a retry later can fix: unreachable, or a statement that ran out of time (57014). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return isConnectionFailure(error) || code(error) === '57014';
}

export interface DatabaseHealth {
  readonly available: boolean;
  /** Takes note of a failed statement; true when the failure means "try again later" (the caller answers 503). */
  report(error: unknown): boolean;
  stop(): void;
}

export function trackHealth(probe: () => Promise<void>, intervalMs = PROBE_INTERVAL_MS): DatabaseHealth {
  let available = true;
  let timer: NodeJS.Timeout | undefined;
  let probing = false;
  let stopped = false;
  const schedule = () => {
    if (timer || stopped) return;
    timer = setInterval(() => void tick(), intervalMs);
    timer.unref();
  };
  const tick = async () => {
    if (probing) return;
    probing = true;
    try {
      await probe();
      available = true;
      clearInterval(timer);
      timer = undefined;
    } catch {
      // Still unreachable: requests get a fast 503 and the next tick tries again.
      available = false;
      schedule();
    } finally {
      probing = false;
    }
  };
  return {
    get available() {
      return available;
    },
    report(error) {
      // One lost connection (a reset) does not make the database unreachable: a probe on a fresh connection
      // decides, and only when it fails too do other requests get the fast 503.
      if (isConnectionFailure(error) && available && !stopped) void tick();
      return isDatabaseUnavailable(error);
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** An in-process database (PGlite) has no connection to lose. */
export function steadyHealth(): DatabaseHealth {
  return { available: true, report: isDatabaseUnavailable, stop: () => {} };
}
