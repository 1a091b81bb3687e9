// The replies' hand-off loop (decisions §15): claims the due head of each conversation's queue (marked in the claim
// itself: see conversations/reply-handoffs.repo.ts), calls the platform for each at once, and records each answer.
// Woken at once when a reply is accepted (in this process directly, in others by the commit's notification), and
// polling besides. A worker that dies leaves marked rows: never sent again, settled by a report or the reconciler.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { FreeformBody, MessagingPlatform, SendResult } from '../messaging/platform.ts';
import {
  type ClaimedReply,
  claimReplies,
  failUnconfirmedReplies,
  leaveUnconfirmed,
  type ReplyBodyRequest,
  recordAccepted,
  recordRefused,
  requeue,
} from '../modules/conversations/reply-handoffs.repo.ts';
import { replyError, replyReference } from '../modules/conversations/reply-rules.ts';
import { fileBytes } from '../modules/files/files.service.ts';
import { type RetryPolicy, verdictOf } from '../modules/recipients/recipient-rules.ts';
import type { HandoffMetric } from './fanout.ts';

export interface ReplyHandoffOptions extends RetryPolicy {
  batchSize: number;
  leaseMs: number;
  reconcileAfterMs: number;
}

export interface ReplyHandoffDeps {
  db: Kysely<DB>;
  platform: MessagingPlatform;
  log: FastifyBaseLogger;
  options: ReplyHandoffOptions;
  onOutcome?: (outcome: HandoffMetric) => void;
}

export function createReplyHandoffs(deps: ReplyHandoffDeps) {
  const { db, platform, log, options } = deps;

  async function send(reply: ClaimedReply): Promise<SendResult> {
    const { request } = reply;
    const callbackData = replyReference(reply.org_id, reply.message_id);
    try {
      if (request.message.kind === 'template') {
        return await platform.sendTemplate({
          phoneNumberId: request.phoneNumberId,
          to: request.to,
          templateName: request.message.templateName,
          language: request.message.language,
          components: request.message.components,
          callbackData,
        });
      }
      const body = await platformBody(reply);
      if (!body.ok) return body.result;
      return await platform.sendMessage({
        phoneNumberId: request.phoneNumberId,
        to: request.to,
        body: body.body,
        ...(request.message.replyToPlatformMessageId
          ? { replyToPlatformMessageId: request.message.replyToPlatformMessageId }
          : {}),
        callbackData,
      });
    } catch (error) {
      // An adapter that throws has not told us whether the platform took the message.
      return { ok: false, reason: 'platform_error', retryable: false, uncertain: true, message: String(error) };
    }
  }

  /**
   * D294: the message as the platform takes it. An uploaded file is given to the platform first (again at each
   * attempt: an upload that was not followed by a send costs nothing) and sent by the platform's media id; a file
   * gone meanwhile (expired) fails the reply.
   */
  async function platformBody(
    reply: ClaimedReply,
  ): Promise<{ ok: true; body: FreeformBody } | { ok: false; result: SendResult }> {
    const body = (reply.request.message as { body: ReplyBodyRequest }).body;
    if (!('fileId' in body)) return { ok: true, body };
    const file = await fileBytes(db, reply.org_id, body.fileId);
    if (!file) {
      const message = `the uploaded file ${body.fileId} is gone (expired and removed)`;
      return { ok: false, result: { ok: false, reason: 'platform_error', retryable: false, message } };
    }
    const uploaded = await platform.uploadMedia({
      phoneNumberId: reply.request.phoneNumberId,
      mimeType: file.mime_type,
      filename: file.filename,
      bytes: file.bytes,
    });
    if (!uploaded.ok) return { ok: false, result: uploaded };
    const { fileId: _file, ...rest } = body;
    return { ok: true, body: { ...rest, mediaId: uploaded.platformMediaId } };
  }

  async function handOff(reply: ClaimedReply): Promise<void> {
    const result = await send(reply);
    const verdict = verdictOf(result, reply.attempts, options);
    deps.onOutcome?.(
      verdict.kind === 'accepted' ? 'sent' : verdict.kind === 'refused' ? 'failed' : (verdict.kind as HandoffMetric),
    );
    if (verdict.kind === 'accepted') return recordAccepted(db, reply, verdict.platformMessageId);
    if (verdict.kind === 'retry') return requeue(db, reply, verdict.retryAfterMs);
    if (verdict.kind === 'uncertain') {
      log.warn({ message: reply.message_id, reason: verdict.reason }, 'reply hand-off outcome unknown');
      return leaveUnconfirmed(db, reply);
    }
    if (result.ok) return; // an accepted answer is always an `accepted` verdict
    return recordRefused(db, reply, replyError(result.reason, result.code), result.message);
  }

  return {
    /** Claims and hands off one batch (one reply per conversation); answers how many it handled. */
    async runOnce(): Promise<number> {
      const claimed = await claimReplies(db, {
        limit: options.batchSize,
        leaseMs: options.leaseMs,
        token: randomUUID(),
      });
      await Promise.all(
        claimed.map((reply) =>
          handOff(reply).catch((error: unknown) => {
            // The lease will run out: the row stays marked, settled by a report or the reconciler.
            log.error({ err: error, message: reply.message_id }, 'reply hand-off not recorded');
          }),
        ),
      );
      return claimed.length;
    },
    reconcile: () => failUnconfirmedReplies(db, options.reconcileAfterMs),
  };
}

export type ReplyHandoffs = ReturnType<typeof createReplyHandoffs>;

/** Wakes the loops that wait for work (a reply was accepted in this process, or another one said so). */
export function createWaker() {
  const listeners = new Set<() => void>();
  return {
    wake(): void {
      for (const listener of listeners) listener();
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type Waker = ReturnType<typeof createWaker>;
