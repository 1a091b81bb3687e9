// Reorder semantics shared by properties and funnel stages (decisions §6: "takes the items it names and moves them").

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
