// The queue's moves of its broadcast (D349): an audience's start and checkpoint, held rows' time, a stop for the
// balance, a template's pause and the end. The queue engine decides them; the broadcasts' owner writes the row
// (`broadcasts/broadcasts.repo.ts` `broadcastMoves`), handed in by the wiring: recipients/ and the worker import
// nothing of broadcasts/ (D308). Each runs in the caller's transaction, so a move and the recipients' rows it goes
// with commit together, as when one statement wrote both.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** An audience chunk just written: how many contacts it took, the last one (the checkpoint), and whether it was the last. */
export interface AudienceChunkWritten {
  added: number;
  /** The last contact of the chunk, its `created_at` as text (microseconds kept, D189); null when it took none. */
  last: { createdAt: string; id: string } | null;
  /** Fewer than a chunk: every contact of the snapshot is in, the broadcast is `ready`. */
  done: boolean;
}

export interface BroadcastMoves {
  /** decisions §16: an audience broadcast starts: its components and contact tokens, its snapshot taken now. */
  startAudience(
    trx: Kysely<DB>,
    orgId: string,
    broadcastId: string,
    prepared: { components: unknown; tokens: unknown },
  ): Promise<void>;
  /** decisions §16: a broadcast whose template can no longer be sent at its start is `cancelled` (`template_not_sendable`). */
  cancelAtStart(trx: Kysely<DB>, orgId: string, broadcastId: string): Promise<void>;
  /** A chunk's recipients were written (the broadcast is locked): `requested`, the checkpoint and the phase follow. */
  advanceAudience(trx: Kysely<DB>, orgId: string, broadcastId: string, chunk: AudienceChunkWritten): Promise<void>;
  /** When the broadcast's held recipients are due a look (null: none held). */
  setHeldUntil(trx: Kysely<DB>, orgId: string, broadcastId: string, at: Date | null): Promise<void>;
  /** D55: live broadcasts the balance cannot pay become `stopped_low_balance`. */
  stopForBalance(trx: Kysely<DB>, orgId: string, broadcastIds: readonly string[]): Promise<void>;
  /**
   * decisions §16: the started, unfinished broadcasts of these templates pause (`template_not_sendable`). Answers
   * how many paused.
   */
  pauseForTemplates(trx: Kysely<DB>, orgId: string, templateIds: readonly string[]): Promise<number>;
  /**
   * The broadcasts that ended (the caller locked them and checked their recipients) get `finished_at`, where it is
   * still null. Answers those it set.
   */
  markFinished(trx: Kysely<DB>, orgId: string, broadcastIds: readonly string[]): Promise<string[]>;
}
