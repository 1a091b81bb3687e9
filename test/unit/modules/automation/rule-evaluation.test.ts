// decisions §20: a rule's conditions — every field and operator, all ignoring case — and a pattern that backtracks
// catastrophically in a backtracking engine (`(a+)+$` on "aaaa…b") answering at once on RE2JS (D262).
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../../src/modules/automation/rule-definitions.ts';
import {
  conditionHolds,
  conditionsHold,
  propertyFacts,
  type RuleFacts,
} from '../../../../src/modules/automation/rule-evaluation.ts';

const facts: RuleFacts = {
  message: { text: 'Hola, ¿tienen PAN integral?', type: 'text' },
  withinBusinessHours: false,
  contact: { country: 'ES', funnelStageId: 'fs_lead', properties: { plan: 'Gold', tags: ['a', 'b'] } },
  conversation: { status: 'open', labels: ['VIP'], assignee: 'unassigned' },
};
const holds = (field: string, operator: Condition['operator'], value: string | boolean) =>
  conditionHolds({ field, operator, value }, facts);

describe('conditions', () => {
  it('compare the message’s text ignoring case', () => {
    expect(holds('message.text', 'contains', 'pan integral')).toBe(true);
    expect(holds('message.text', 'starts_with', 'HOLA')).toBe(true);
    expect(holds('message.text', 'equals', 'hola, ¿tienen pan integral?')).toBe(true);
    expect(holds('message.text', 'equals', 'hola')).toBe(false);
    expect(holds('message.text', 'matches', '\\b(hola|buenas)\\b')).toBe(true);
    expect(holds('message.text', 'matches', '^bye')).toBe(false);
  });

  it('compare the other fields', () => {
    expect(holds('message.type', 'equals', 'TEXT')).toBe(true);
    expect(holds('within_business_hours', 'equals', false)).toBe(true);
    expect(holds('within_business_hours', 'equals', true)).toBe(false);
    expect(holds('contact.country', 'equals', 'es')).toBe(true);
    expect(holds('contact.funnel_stage_id', 'equals', 'fs_lead')).toBe(true);
    expect(holds('contact.properties.plan', 'equals', 'gold')).toBe(true);
    expect(holds('contact.properties.tags', 'contains', 'b')).toBe(true);
    expect(holds('contact.properties.missing', 'contains', 'x')).toBe(false);
    expect(holds('conversation.status', 'equals', 'open')).toBe(true);
    expect(holds('conversation.labels', 'contains', 'vip')).toBe(true);
    expect(holds('conversation.assignee', 'equals', 'unassigned')).toBe(true);
    expect(holds('conversation.assignee', 'equals', 'ai')).toBe(false);
  });

  it('read a contact’s properties by their values, not by the shape the API shows them in', () => {
    const properties = propertyFacts({
      plan: { kind: 'TEXT', value_text: 'Gold', value_number: null, value_json: null },
      visits: { kind: 'NUMBER', value_text: null, value_number: 3 },
      tags: { kind: 'MULTI_SELECT', value_text: null, value_json: ['a', 'b'] },
    } as Record<string, object>);
    expect(properties).toEqual({ plan: 'Gold', visits: 3, tags: ['a', 'b'] });
    const shown = { ...facts, contact: { ...facts.contact, properties } };
    const on = (field: string, operator: Condition['operator'], value: string) =>
      conditionHolds({ field, operator, value }, shown);
    expect(on('contact.properties.plan', 'equals', 'gold')).toBe(true);
    expect(on('contact.properties.plan', 'contains', 'value_text')).toBe(false);
    expect(on('contact.properties.visits', 'equals', '3')).toBe(true);
    expect(on('contact.properties.tags', 'contains', 'b')).toBe(true);
  });

  it('all must hold; none always holds', () => {
    const both: Condition[] = [
      { field: 'contact.country', operator: 'equals', value: 'ES' },
      { field: 'within_business_hours', operator: 'equals', value: true },
    ];
    expect(conditionsHold(both, facts)).toBe(false);
    expect(conditionsHold(both.slice(0, 1), facts)).toBe(true);
    expect(conditionsHold([], facts)).toBe(true);
  });

  it('match a catastrophic pattern in linear time: (a+)+$ on 100,000 a’s and a b cannot stall the server', {
    timeout: 10_000,
  }, () => {
    const long = { ...facts, message: { text: `${'a'.repeat(100_000)}b`, type: 'text' } };
    // A backtracking engine (JavaScript's RegExp) would run for longer than the universe has existed.
    expect(conditionHolds({ field: 'message.text', operator: 'matches', value: '(a+)+$' }, long)).toBe(false);
    expect(conditionHolds({ field: 'message.text', operator: 'matches', value: '(a+)+b$' }, long)).toBe(true);
  });
});
