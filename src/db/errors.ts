// Recognising PostgreSQL errors the same way on pg and PGlite (both expose SQLSTATE as `code`).
interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

/**
 * Whether the error names `constraint`: node-postgres fills `constraint`, PGlite names it only in the message; on
 * Citus it is the shard's copy, the name with `_<shard id>` after it (D317).
 */
function names(pgError: PgError, constraint: string): boolean {
  const shard = new RegExp(`^${constraint}(_\\d+)?$`);
  if (pgError.constraint !== undefined && shard.test(pgError.constraint)) return true;
  return [...(pgError.message ?? '').matchAll(/"([^"]+)"/g)].some((match) => shard.test(match[1] as string));
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgError | undefined;
  if (pgError?.code !== '23505') return false;
  return !constraint || names(pgError, constraint);
}

/** A foreign key refused a row (SQLSTATE 23503), optionally that of one constraint. */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgError | undefined;
  if (pgError?.code !== '23503') return false;
  return !constraint || names(pgError, constraint);
}

/** PostgreSQL broke a lock cycle by failing this transaction (SQLSTATE 40P01): trying again is safe. */
export function isDeadlock(error: unknown): boolean {
  return (error as PgError | undefined)?.code === '40P01';
}

/** SERIALIZABLE or REPEATABLE READ refused the transaction (SQLSTATE 40001): trying again is safe. */
export function isSerializationFailure(error: unknown): boolean {
  return (error as PgError | undefined)?.code === '40001';
}
