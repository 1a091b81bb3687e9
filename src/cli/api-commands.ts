// `crm me`, `crm contacts …`: the CLI as a client of the public API, through the SDK, with CRM_API_KEY and
// CRM_BASE_URL. Nothing here touches the database, so these commands work beside a running server and against a
// remote one alike.
import { existsSync } from 'node:fs';
import { ApiError, ConnectionError, CrmClient } from '../../sdk/src/index.ts';
import { importClient, importContacts, stateFileOf } from './contact-import.ts';
import { Interrupted, print, UsageError } from './output.ts';

export const API_USAGE = `Public API (through the SDK; needs CRM_API_KEY, and CRM_BASE_URL unless http://127.0.0.1:8080):
  me                            the organization behind the key
  contacts list [--limit N] [--q TEXT] [--cursor C] [--all]
                                one page as JSON; --all prints every contact, one JSON line each
  contacts get CONTACT_ID
  contacts import FILE.csv --match-on email|phone
                                loads the file in batches of 100 (decisions §12); properties.KEY cells are
                                written by their property's kind (options by label or key, several with |,
                                dates YYYY-MM-DD, yes/no, numbers, money: see the README); refused rows go to
                                FILE.rejected.csv with their CSV line and reasons; a later row with the
                                match value of an earlier one is refused; Ctrl-C stops cleanly (exit 130)
                                and the same command resumes (FILE.csv.import-state.json, tied to the
                                file's size and SHA-256: a changed file is refused)`;

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface ApiCommandValues {
  limit?: string | undefined;
  q?: string | undefined;
  cursor?: string | undefined;
  all?: boolean | undefined;
  'match-on'?: string | undefined;
}

function clientFromEnv(env: NodeJS.ProcessEnv): CrmClient {
  const apiKey = env.CRM_API_KEY;
  if (!apiKey) throw new UsageError('CRM_API_KEY is required for the public API commands (an oak_… key)');
  return new CrmClient({ apiKey, baseUrl: env.CRM_BASE_URL || DEFAULT_BASE_URL });
}

function pageSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError('--limit must be a whole number');
  return Number(value);
}

export async function apiCommand(
  command: string,
  sub: string | undefined,
  rest: string[],
  values: ApiCommandValues,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const client = clientFromEnv(env);
  switch (command === 'me' ? 'me' : `${command} ${sub}`) {
    case 'me':
      return print(await client.me());
    case 'contacts list': {
      const query = {
        ...(values.limit !== undefined ? { limit: pageSize(values.limit) } : {}),
        ...(values.q !== undefined ? { q: values.q } : {}),
        ...(values.cursor !== undefined ? { cursor: values.cursor } : {}),
      };
      if (!values.all) return print(await client.contacts.list(query));
      for await (const contact of client.contacts.iterate(query)) process.stdout.write(`${JSON.stringify(contact)}\n`);
      return;
    }
    case 'contacts get': {
      const id = rest[0];
      if (!id) throw new UsageError('CONTACT_ID is required');
      return print(await client.contacts.get(id));
    }
    case 'contacts import': {
      const file = rest[0];
      if (!file) throw new UsageError('FILE.csv is required');
      if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
      const matchOn = values['match-on'];
      if (matchOn !== 'email' && matchOn !== 'phone') throw new UsageError('--match-on must be email or phone');
      // Its own client: every answer tells the import's budget the organization's rate limit.
      const { client: budgeted, budget } = importClient(env.CRM_API_KEY ?? '', client.baseUrl);
      // Ctrl-C: no new batch starts, the requests in flight are aborted (they are sent again by the next run), the
      // state and the summary are written, and the command says how to resume (exit 130). That takes moments, so
      // another Ctrl-C meanwhile does not cut it short (D233).
      const stop = new AbortController();
      const onInterrupt = () => {
        if (stop.signal.aborted) process.stderr.write('crm: stopping: writing the import state and the summary\n');
        stop.abort();
      };
      process.on('SIGINT', onInterrupt);
      const result = await importContacts(budgeted, file, matchOn, { budget, signal: stop.signal }).finally(() =>
        process.off('SIGINT', onInterrupt),
      );
      print(result);
      if (result.interrupted) {
        throw new Interrupted(
          `interrupted after ${result.skipped + result.imported + result.rejected} of the file's rows (${stateFileOf(file)} ` +
            `records them); run the same command again to resume: crm contacts import ${file} --match-on ${matchOn}`,
        );
      }
      return;
    }
    default:
      throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
  }
}

/** The message and exit code for an error of the API commands, or undefined when it is not one of theirs. */
export function describeApiFailure(error: unknown): { message: string; exitCode: number } | undefined {
  if (error instanceof ApiError) {
    return { message: JSON.stringify({ status: error.status, code: error.code, detail: error.detail }), exitCode: 1 };
  }
  if (error instanceof ConnectionError) {
    return { message: `cannot reach the API (CRM_BASE_URL): ${error.message}`, exitCode: 1 };
  }
  return undefined;
}
