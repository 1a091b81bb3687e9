// One owner per table (docs/architecture.md's owners table, D306–D308): every SQL write of these tables outside the
// migrations' triggers lives in its owner's files. A write found elsewhere is a second owner, which this refuses.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');

const owners: Record<string, string[]> = {
  broadcast_recipients: ['modules/recipients/'],
  messaging_windows: ['modules/messaging-accounts/window.repo.ts'],
  messaging_window_phones: ['modules/messaging-accounts/window.repo.ts'],
  messaging_window_recounts: ['modules/messaging-accounts/window.repo.ts'],
  // The operator creates accounts and names them; the balance moves only in accounts.repo.ts.
  messaging_accounts: ['modules/messaging-accounts/accounts.repo.ts', 'modules/operator/operator.repo.ts'],
  idempotency_keys: ['http/idempotency.ts'],
};

/** The tables a text writes: Kysely's `updateTable`/`insertInto`/`deleteFrom` and raw `update`/`insert into`/`delete from`. */
function writtenTables(text: string): string[] {
  const names = Object.keys(owners).join('|');
  const builder = new RegExp(`\\b(?:updateTable|insertInto|deleteFrom)\\(\\s*'(${names})\\b`, 'g');
  const raw = new RegExp(`\\b(?:update|insert\\s+into|delete\\s+from)\\s+(${names})\\b`, 'gi');
  return [...text.matchAll(builder), ...text.matchAll(raw)].map((match) => match[1] as string);
}

describe('table owners', () => {
  it('reads writes of every shape', () => {
    const text = [
      "db.updateTable('broadcast_recipients')",
      "trx.insertInto('messaging_windows').values({})",
      'sql`update messaging_window_phones set x = 1`',
      'sql`insert into idempotency_keys (a) values (1)`',
      'sql`delete from messaging_window_recounts where true`',
      "db.selectFrom('broadcast_recipients')",
    ].join('\n');
    expect(writtenTables(text).sort()).toEqual([
      'broadcast_recipients',
      'idempotency_keys',
      'messaging_window_phones',
      'messaging_window_recounts',
      'messaging_windows',
    ]);
  });

  it('every write of an owned table is in its owner’s files', () => {
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .map((name) => name.split('\\').join('/'))
      .filter((name) => name.endsWith('.ts') && !name.startsWith(posix.join('db', 'migrations')));
    const found: string[] = [];
    const strays: string[] = [];
    for (const file of files) {
      for (const table of writtenTables(readFileSync(join(src, file), 'utf8'))) {
        found.push(table);
        if (!owners[table]?.some((owner) => file.startsWith(owner))) strays.push(`${file} writes ${table}`);
      }
    }
    expect(new Set(found)).toEqual(new Set(Object.keys(owners)));
    expect(strays).toEqual([]);
  });
});
