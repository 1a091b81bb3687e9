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
