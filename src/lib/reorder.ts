// Reorder semantics shared by properties and funnel stages (decisions §6: "takes the items it names and moves them").
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';

export interface MoveRequest {
  id: string;
  order_idx: number;
}

/**
 * The new order of every item: the unnamed items keep their relative order, and each named item is moved to the
 * position it asks for (lowest requested position first; a position past the end appends). Positions are then
 * renumbered 0..n-1, so the result is always a clean sequence.
 */
export function applyMoves(currentOrder: string[], moves: MoveRequest[]): string[] {
  const named = new Set(moves.map((move) => move.id));
  const result = currentOrder.filter((id) => !named.has(id));
  const sorted = moves
    .map((move, index) => ({ ...move, index }))
    .sort((a, b) => a.order_idx - b.order_idx || a.index - b.index);
  // Items asking for the same position keep the order they were named in.
  let floor = 0;
  for (const move of sorted) {
    const at = Math.max(Math.min(move.order_idx, result.length), floor);
    result.splice(at, 0, move.id);
    floor = at + 1;
  }
  return result;
}

/**
 * The position after the organization's last item, read in a statement of its own: Citus takes no subquery in an
 * INSERT's values (D317).
 */
export async function nextOrderIndex(
  db: Kysely<DB>,
  table: 'crm_properties' | 'funnel_stages',
  orgId: string,
): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select(sql<number>`coalesce(max(order_idx) + 1, 0)::int`.as('next'))
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return row?.next ?? 0;
}
