// Opaque cursors for keyset pagination, shared by every paginated list.
// A cursor carries the last row's sort key and a fingerprint of the list and filter it was made for: a cursor
// that cannot be decoded, or comes from another list or filter, is a 422 on ["query","cursor"] (decisions §2).
import { createHash } from 'node:crypto';
import { type TSchema, Type } from 'typebox';
import { validationError } from './errors.ts';
import { Nullable } from './schemas.ts';

export const LimitQuery = (defaultLimit = 50, max = 200) =>
  Type.Integer({ minimum: 1, maximum: max, default: defaultLimit, description: `Page size, 1 to ${max}.` });

export const CursorQuery = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Opaque; pass the previous page’s `next_cursor`.',
});

/** `{items, next_cursor}` (plus `total_count` when the list counts); `schema` names it (`title`) and describes it. */
export const Page = <T extends TSchema>(
  item: T,
  options: { totalCount?: 'required' | 'optional' } = {},
  schema: { title?: string; description?: string } = {},
) =>
  Type.Object(
    {
      items: Type.Array(item),
      next_cursor: Nullable(Type.String({ description: 'Null at the end of the list.' })),
      ...(options.totalCount === 'required'
        ? { total_count: Type.Integer({ description: 'Exact number of items matching the filter.' }) }
        : options.totalCount === 'optional'
          ? { total_count: Type.Optional(Nullable(Type.Integer())) }
          : {}),
    },
    { additionalProperties: false, ...schema },
  );

function fingerprint(scope: string, filter: unknown): string {
  return createHash('sha256')
    .update(`${scope}\u0000${JSON.stringify(filter ?? null)}`)
    .digest('base64url')
    .slice(0, 12);
}

/** `scope` names the list (e.g. `contacts:recent:desc`); `filter` is everything that shapes the result set. */
export function encodeCursor(scope: string, filter: unknown, position: unknown[]): string {
  return Buffer.from(JSON.stringify({ f: fingerprint(scope, filter), p: position }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, scope: string, filter: unknown): unknown[] {
  const invalid = () => validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', { input: cursor });
  let decoded: { f?: unknown; p?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!decoded || typeof decoded !== 'object' || !Array.isArray(decoded.p)) throw invalid();
  if (decoded.f !== fingerprint(scope, filter)) {
    throw validationError(['query', 'cursor'], 'Cursor was made for another list or filter', 'value_error', {
      input: cursor,
    });
  }
  return decoded.p;
}
