// decisions §20: what a contact's message runs, in the transaction that records it (registered after the
// conversations' handler, so the message and its conversation are stored): opt-out keywords first (§14: a keyword's
// message runs nothing else); the rules of its event by position (a new conversation: its `conversation.created`
// rules, then its `message.received` rules, as one evaluation; `stop` ends both), each matching rule's actions in
// order; the away message; then, when the assistant owns the conversation, its job. Everything it sends is a reply
// of §15 queued here; every state change goes through §19's one change function, once for all the rules' changes
// (one `conversation.updated` per cause). A webhook delivered twice never reaches here twice (processed events).
import type { Transaction } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { newId } from '../../../lib/ids.ts';
import type { PlatformEventHandler, PlatformEventHandlers } from '../../../messaging/inbound.ts';
import { optOutKeyword } from '../../contacts/contact-intake.ts';
import { readContact } from '../../contacts/contact-view.ts';
import type { ConversationChange, ConversationChanges } from '../../conversations/conversation-changes.ts';
import { startWithAssistant } from '../../conversations/conversation-state.repo.ts';
import { addNote } from '../../conversations/notes.ts';
import { insertRuns } from '../automation-rules.repo.ts';
import { organizationTimezone } from '../business-hours.repo.ts';
import { readBusinessHours } from '../business-hours.service.ts';
import { isOpenAt, wasOpenBetween } from '../business-hours.ts';
import type { Action, Condition } from '../rule-definitions.ts';
import { conditionsHold, propertyFacts, type RuleFacts } from '../rule-evaluation.ts';
import { queueAutomatedText } from './automated-messages.ts';
import * as repo from './engine.repo.ts';

type Outcome = { type: Action['type']; outcome: 'done' | 'skipped' | 'failed'; reason?: string };

const assigneeWord = (type: string | null, userId: string | null) =>
  type === 'ai' ? 'ai' : type === 'user' ? (userId as string) : 'unassigned';

const MAX_LABELS = 20;

/** Whether the autonomous assistant serves this number (decisions §20: `channel_ids` empty serves all). */
async function assistantServes(trx: Transaction<DB>, orgId: string, channelId: string) {
  const row = await trx
    .selectFrom('ai_assistants')
    .select(['enabled', 'mode', 'channel_ids'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  const enabled = row?.enabled === true;
  const serves =
    enabled && row.mode === 'autonomous' && (row.channel_ids.length === 0 || row.channel_ids.includes(channelId));
  return { enabled, serves };
}

const runAutomation =
  (changes: ConversationChanges): PlatformEventHandler<'inbound_message'> =>
  async (trx, event, { orgId, channelId, receivedAt }) => {
    if (!channelId) return 'unmatched';
    // §14: a keyword's message runs nothing else.
    if (optOutKeyword(event.text) !== undefined) return 'unmatched';
    const inbound = await repo.findInbound(trx, orgId, event.platformMessageId);
    if (inbound?.direction !== 'inbound') return 'unmatched';
    const now = receivedAt;
    const conversationId = inbound.conversation_id;
    const isNew = !inbound.has_earlier;
    const assistant = await assistantServes(trx, orgId, inbound.channel_id);
    let assignee = assigneeWord(inbound.assignee_type, inbound.assignee_user_id);
    let status = inbound.status;
    if (isNew && assistant.serves && assignee === 'unassigned') {
      await startWithAssistant(trx, orgId, conversationId);
      assignee = 'ai';
      status = 'pending';
    }

    const [hours, timezone] = await Promise.all([readBusinessHours(trx, orgId), organizationTimezone(trx, orgId)]);
    const open = isOpenAt(hours, timezone, now);
    const rules = await repo.activeRules(
      trx,
      orgId,
      isNew ? ['conversation.created', 'message.received'] : ['message.received'],
    );
    if (rules.length > 0) {
      const contact = await readContact(trx, orgId, inbound.contact_id);
      const facts: RuleFacts = {
        message: { text: inbound.text, type: inbound.type },
        withinBusinessHours: open,
        contact: {
          country: contact?.country ?? null,
          funnelStageId: contact?.funnel_stage_id ?? null,
          properties: propertyFacts(contact?.properties ?? {}),
        },
        conversation: { status, labels: [...inbound.labels], assignee },
      };
      // conversation.created rules first, then message.received, each by position (one evaluation).
      const ordered = isNew
        ? [
            ...rules.filter((rule) => rule.event === 'conversation.created'),
            ...rules.filter((rule) => rule.event !== 'conversation.created'),
          ]
        : rules;
      const change: ConversationChange = {};
      const runs = [];
      for (const rule of ordered) {
        if (!conditionsHold(rule.conditions as Condition[], facts)) continue;
        const outcomes: Outcome[] = [];
        for (const action of rule.actions as Action[]) {
          outcomes.push(await applyAction(trx, orgId, conversationId, action, facts, change, assistant.enabled, now));
        }
        runs.push({
          org_id: orgId,
          id: newId('run'),
          rule_id: rule.id,
          conversation_id: conversationId,
          message_id: inbound.id,
          actions: JSON.stringify(outcomes),
          created_at: now,
        });
        if (rule.stop) break;
      }
      // §19: every change the rules made, as one change (one `conversation.updated`).
      if (Object.keys(change).length > 0)
        await changes.applyConversationChange(trx, orgId, conversationId, change, 'rule', now);
      await insertRuns(trx, runs);
      assignee = facts.conversation.assignee;
    }

    // The away message: closed now, nobody owns the conversation, once per closed period.
    if (!open && hours.away_message && assignee === 'unassigned') {
      const state = await repo.findAutomationState(trx, orgId, conversationId);
      const newPeriod = !state?.away_sent_at || wasOpenBetween(hours, timezone, state.away_sent_at, now);
      if (newPeriod) {
        const sent = await queueAutomatedText(trx, orgId, conversationId, hours.away_message.text, 'system', now);
        if (sent.sent) await repo.recordAwayMessage(trx, orgId, conversationId, now);
      }
    }

    // The assistant, when it still owns the conversation: one job (one model call) for this message.
    if (assignee === 'ai' && assistant.serves) {
      await repo.queueAssistantJob(trx, orgId, conversationId, inbound.id, now);
    }
    return 'applied';
  };

/** One action of a matching rule: messages and notes at once, state changes gathered into `change`. */
async function applyAction(
  trx: Transaction<DB>,
  orgId: string,
  conversationId: string,
  action: Action,
  facts: RuleFacts,
  change: ConversationChange,
  assistantEnabled: boolean,
  now: Date,
): Promise<Outcome> {
  const done: Outcome = { type: action.type, outcome: 'done' };
  const failed = (reason: string): Outcome => ({ type: action.type, outcome: 'failed', reason });
  switch (action.type) {
    case 'send_text': {
      const sent = await queueAutomatedText(trx, orgId, conversationId, action.text, 'system', now);
      return sent.sent ? done : { type: action.type, outcome: 'skipped', reason: sent.reason };
    }
    case 'add_note':
      await addNote(trx, orgId, conversationId, { text: action.text, authorId: null, sender: 'system' }, now);
      return done;
    case 'add_labels': {
      const labels = [...facts.conversation.labels];
      for (const label of action.labels) {
        if (!labels.some((existing) => existing.toLowerCase() === label.toLowerCase())) labels.push(label);
      }
      if (labels.length > MAX_LABELS) return failed('label_limit');
      facts.conversation.labels = labels;
      change.labels = labels;
      return done;
    }
    case 'assign': {
      const assignee = action.assignee;
      if (assignee?.type === 'ai' && !assistantEnabled) return failed('ai_disabled');
      if (assignee?.type === 'user') {
        const user = await trx
          .selectFrom('users')
          .select('id')
          .where('org_id', '=', orgId)
          .where('id', '=', assignee.id)
          .executeTakeFirst();
        if (!user) return failed('unknown_user');
      }
      change.assignee = assignee;
      facts.conversation.assignee = assigneeWord(
        assignee?.type ?? null,
        assignee?.type === 'user' ? assignee.id : null,
      );
      return done;
    }
    case 'assign_team': {
      if (action.team_id !== null) {
        const team = await trx
          .selectFrom('teams')
          .select('id')
          .where('org_id', '=', orgId)
          .where('id', '=', action.team_id)
          .executeTakeFirst();
        if (!team) return failed('unknown_team');
      }
      change.team_id = action.team_id;
      return done;
    }
    case 'set_status': {
      const until = action.snoozed_until ? new Date(action.snoozed_until) : null;
      change.status = action.status;
      // A snooze time already passed: until the contact's next message (decisions §19's snooze without a time).
      change.snoozed_until = action.status === 'snoozed' && until && until > now ? until : null;
      facts.conversation.status = action.status;
      return done;
    }
    case 'set_priority':
      change.priority = action.priority;
      return done;
  }
}

/** The handlers, with §19's change functions (D350: given by the wiring). */
export const automationHandlers = (changes: ConversationChanges): PlatformEventHandlers => ({
  inbound_message: [runAutomation(changes)],
});
