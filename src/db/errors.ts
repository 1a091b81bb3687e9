// Recognising PostgreSQL errors the same way on pg and PGlite (both expose SQLSTATE as `code`).
interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgError | undefined;
  if (pgError?.code !== '23505') return false;
  if (!constraint) return true;
  // node-postgres fills `constraint`; PGlite names it only in the message.
  return pgError.constraint === constraint || (pgError.message ?? '').includes(`"${constraint}"`);
}

/** A foreign key refused a row (SQLSTATE 23503), optionally that of one constraint. */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as PgError | undefined;
  if (pgError?.code !== '23503') return false;
  if (!constraint) return true;
  return pgError.constraint === constraint || (pgError.message ?? '').includes(`"${constraint}"`);
}

/** PostgreSQL broke a lock cycle by failing this transaction (SQLSTATE 40P01): trying again is safe. */
export function isDeadlock(error: unknown): boolean {
  return (error as PgError | undefined)?.code === '40P01';
}

/** SERIALIZABLE or REPEATABLE READ refused the transaction (SQLSTATE 40001): trying again is safe. */
export function isSerializationFailure(error: unknown): boolean {
  return (error as PgError | undefined)?.code === '40001';
}
