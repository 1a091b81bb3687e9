// Streams of fetched files: a body handed on chunk by chunk (never a whole file in memory), with a deadline for
// each wait on the far side, so a server that stops sending mid-file cannot hold a download open forever.

/**
 * `body` as a new stream that fails when a read waits longer than `idleMs` for the next chunk (then `abort` stops
 * the request). Only waiting on the far side counts: a slow reader is backpressure, not a stall. Cancelling the new
 * stream cancels `body`, which ends the request.
 */
export function withIdleTimeout(
  body: ReadableStream<Uint8Array>,
  idleMs: number,
  abort: (reason: Error) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let stalled: Error | undefined;
        const timer = setTimeout(() => {
          stalled = new Error(`no data for ${idleMs} ms`);
          abort(stalled);
        }, idleMs);
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          // The stall, rather than the abort it caused, is what went wrong.
          controller.error(stalled ?? error);
        } finally {
          clearTimeout(timer);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    // Pull one chunk at a time, only when the consumer asks: the queue holds at most one chunk.
    { highWaterMark: 0 },
  );
}

/** A declared Content-Length as a number, when it is one. */
export function declaredLength(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  const length = Number(value.trim());
  return Number.isSafeInteger(length) ? length : undefined;
}
