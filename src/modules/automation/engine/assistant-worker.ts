// decisions §20: the autonomous assistant's answers, from the job queue a contact's message wrote. A worker claims a
// conversation's oldest job (FOR UPDATE SKIP LOCKED and a lease: one model call at a time per conversation, in
// order), checks the guardrails, asks the model outside any transaction (up to its deadline), then applies the
// answer in one transaction that first checks again that the assistant still owns the conversation — an answer that
// comes back after a person took over is dropped. Guardrails in code: no assistant message once a user is
// assigned, to an opted-out contact or outside the window; never a template; at the reply limit the next message
// hands off (`reply_limit`) without a call. Any model failure is a handoff with `provider_error`.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DeploymentModel } from '../../../config.ts';
import type { DB } from '../../../db/schema.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Keyring } from '../../../lib/secrets-box.ts';
import type { ConversationChanges } from '../../conversations/conversation-changes.ts';
import { WINDOW_MS } from '../../conversations/conversations.repo.ts';
import { addNote } from '../../conversations/notes.ts';
import { findReplyContext } from '../../conversations/replies.repo.ts';
import { findAssistant } from '../assistant/ai-assistant.repo.ts';
import { conversationTurns } from '../assistant/ai-assistant.service.ts';
import type { ModelAnswer } from '../assistant/assistant-model.ts';
import { type AssistantSettings, modelFor, settingsOf } from '../assistant/assistant-settings.ts';
import { queueAutomatedText } from './automated-messages.ts';
import * as repo from './engine.repo.ts';

export interface AssistantWorkerOptions {
  /** Longer than the model's deadline, so a live call keeps its job. */
  leaseMs: number;
  /** Jobs (conversations) a worker answers at once. */
  batch: number;
}

export const ASSISTANT_WORKER_DEFAULTS: AssistantWorkerOptions = { leaseMs: 120_000, batch: 8 };

/**
 * D269: a job's lease is four times the model's deadline (120 s with the default 30 s): longer than a claimed job
 * can take (its reads, the call, the answer's transaction), and no longer than it must be — a job whose worker died
 * is answered that soon after.
 */
export const assistantLeaseMs = (timeoutMs: number) => 4 * timeoutMs;

export interface AssistantWorkerDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** §19's change functions, with auto-assignment's turn counter (D350). */
  changes: ConversationChanges;
  log: FastifyBaseLogger;
  keyring: Keyring;
  allowHosts: readonly string[];
  deployment: DeploymentModel;
  /** Wakes the replies' hand-off loop after a commit that queued a message. */
  wake(): void;
  options?: Partial<AssistantWorkerOptions> | undefined;
}

type Decision = ModelAnswer | { action: 'drop' };

export function createAssistantWorker(deps: AssistantWorkerDeps) {
  const { db, clock, log } = deps;
  const { applyConversationChange } = deps.changes;
  const options = { ...ASSISTANT_WORKER_DEFAULTS, ...deps.options };

  /** What to do before any call: drop the job, hand off at the reply limit, or ask the model. */
  async function prepare(job: repo.ClaimedJob, settings: AssistantSettings): Promise<Decision | 'ask'> {
    const owner = await repo.conversationOwner(db, job.org_id, job.conversation_id);
    if (owner?.assignee_type !== 'ai' || !settings.enabled || settings.mode !== 'autonomous') return { action: 'drop' };
    // D270: the numbers it serves may have changed since the message queued the job (decisions §20: `channel_ids`,
    // empty serves all).
    if (settings.channelIds.length > 0 && !settings.channelIds.includes(owner.channel_id)) return { action: 'drop' };
    const context = await findReplyContext(db, job.org_id, job.conversation_id);
    const now = clock.now().getTime();
    const windowOpen = context?.last_inbound_at && context.last_inbound_at.getTime() + WINDOW_MS > now;
    if (!context || context.opted_out || !windowOpen) return { action: 'drop' };
    const state = await repo.findAutomationState(db, job.org_id, job.conversation_id);
    if ((state?.ai_replies ?? 0) >= settings.maxReplies)
      return { action: 'handoff', text: null, reason: 'reply_limit' };
    return 'ask';
  }

  async function ask(job: repo.ClaimedJob, settings: AssistantSettings): Promise<ModelAnswer> {
    const model = modelFor(settings, deps.deployment, deps.allowHosts);
    if (!model) return { action: 'handoff', text: null, reason: 'provider_error' };
    try {
      return await model.answer({
        instructions: settings.instructions,
        faqs: settings.faqs,
        turns: await conversationTurns(db, job.org_id, job.conversation_id),
      });
    } catch (error) {
      log.warn({ err: error, orgId: job.org_id, conversationId: job.conversation_id }, 'assistant: the model failed');
      return { action: 'handoff', text: null, reason: 'provider_error' };
    }
  }

  /** Applies the decision in one transaction, if the assistant still owns the conversation; answers whether it sent. */
  async function apply(job: repo.ClaimedJob, settings: AssistantSettings, decision: Decision): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const { org_id: orgId, conversation_id: conversationId } = job;
      const owner = await repo.conversationOwner(trx, orgId, conversationId, true);
      if (!(await repo.finishJob(trx, job))) return false; // the lease passed to another worker: its job now
      // A person took over while the model was thinking: the answer is dropped.
      if (decision.action === 'drop' || owner?.assignee_type !== 'ai') return false;
      const now = clock.now();
      const say = async (text: string) => {
        const sent = await queueAutomatedText(trx, orgId, conversationId, text, 'ai', now);
        return sent.sent;
      };
      if (decision.action === 'reply') {
        if (!(await say(decision.text))) return false;
        await repo.countAssistantMessage(trx, orgId, conversationId);
        return true;
      }
      if (decision.action === 'resolve') {
        let sent = false;
        if (decision.text !== null && (await say(decision.text))) {
          await repo.countAssistantMessage(trx, orgId, conversationId);
          sent = true;
        }
        // decisions §20: a resolve leaves the assistant the assignee.
        await applyConversationChange(trx, orgId, conversationId, { status: 'resolved' }, 'assistant', now);
        return sent;
      }
      // Handoff: the handoff message, then the conversation to people, then the note (decisions §20).
      const sent = await say(settings.handoffMessage);
      await applyConversationChange(
        trx,
        orgId,
        conversationId,
        {
          assignee: null,
          status: 'open',
          ...(settings.handoffTeamId !== null ? { team_id: settings.handoffTeamId } : {}),
        },
        'assistant',
        now,
      );
      await addNote(
        trx,
        orgId,
        conversationId,
        { text: `AI handed off: ${decision.reason}`, authorId: null, sender: 'system' },
        now,
      );
      return sent;
    });
  }

  async function handle(job: repo.ClaimedJob): Promise<void> {
    const settings = settingsOf(deps.keyring, await findAssistant(db, job.org_id));
    const prepared = await prepare(job, settings);
    const decision = prepared === 'ask' ? await ask(job, settings) : prepared;
    if (await apply(job, settings, decision)) deps.wake();
  }

  return {
    /** Claims and answers a batch of jobs (each of another conversation); answers how many it claimed. */
    async runOnce(): Promise<number> {
      const jobs = await repo.claimJobs(db, options.batch, options.leaseMs, randomUUID());
      const results = await Promise.allSettled(jobs.map(handle));
      for (const result of results) {
        if (result.status === 'rejected')
          log.error({ err: result.reason }, 'assistant: a job failed; retried at its lease');
      }
      return jobs.length;
    },
  };
}

export type AssistantWorker = ReturnType<typeof createAssistantWorker>;
