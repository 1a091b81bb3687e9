// What every `crm` command shares: one way to print a result, and one kind of mistake in how a command was called.

/** A command's result on stdout, as indented JSON (stderr carries messages and progress). */
export const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** A mistake in how a command was called: the message, the usage, exit code 2. */
export class UsageError extends Error {}

/** A refusal with a sentence for the person at the terminal (exit code 1, no usage). */
export class CommandRefused extends Error {}

/** A command stopped by Ctrl-C (SIGINT) after putting its work in order: the message, exit code 130. */
export class Interrupted extends Error {}

export function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}
