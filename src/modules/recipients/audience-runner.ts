// decisions §16, the worker's side of audience broadcasts: start the due ones, add recipients chunk by chunk and
// release held ones as the 24-hour window gives room. Any number of workers run it: each step locks what it works
// on (SKIP LOCKED where another worker may hold it).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { materializeChunk, releaseHeld } from './audience-materialize.ts';
import { type StartDeps, startDueBroadcasts } from './audience-start.ts';

export interface AudienceRunnerOptions {
  /** Contacts read and recipients written per chunk (one statement). */
  chunkSize: number;
}

export function createAudienceRunner(deps: StartDeps & { db: Kysely<DB> }, options: AudienceRunnerOptions) {
  return {
    /** One round of each step; answers the work done (0: nothing to do). */
    async runOnce(): Promise<number> {
      const started = await startDueBroadcasts(deps);
      const added = await materializeChunk(deps.db, deps.moves, options.chunkSize);
      const released = await releaseHeld(deps.db, deps.moves, options.chunkSize);
      return started + added + released;
    },
  };
}

export type AudienceRunner = ReturnType<typeof createAudienceRunner>;
