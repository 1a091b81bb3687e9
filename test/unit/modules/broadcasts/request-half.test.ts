// A broadcast's request half (D336): the files a reader crosses to follow `POST /v1/templates/{id}/send` and
// `POST /v1/broadcasts` from the route to the commit, at most 14 each. What is counted: from the routes file and the
// service its handler calls (handed to it by the wiring, so a type import), every file reached through value imports
// (not `import type`) inside `modules/broadcasts/`, and each file of another folder those import: the door into that
// module, counted but not followed (what lies behind it is that module's own business). Not counted: `*.schemas.ts`
// (the contract's shapes, which the OpenAPI document shows) and the shell every route shares: `db/`, `lib/` and the
// `http/` files below. The lists are spelled out, so that a file joining or leaving the path shows in the diff.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../../../src');
const shell = [
  'db/',
  'lib/',
  'http/api-error.ts',
  'http/auth.ts',
  'http/errors.ts',
  'http/lazy-compile.ts',
  'http/ordered-body.ts',
  'http/pagination.ts',
  'http/schemas.ts',
  'http/validation.ts',
];

/** The relative files `file` imports for their values (an import of types alone loads nothing). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+'(\.[^']+)'/gms)) {
    if (match[1]) continue;
    const names = (match[2] as string).trim();
    const typesOnly =
      /^\{[^}]*\}$/s.test(names) &&
      names
        .replace(/[{}\s]/g, '')
        .split(',')
        .filter(Boolean)
        .every((name) => name.startsWith('type'));
    if (!typesOnly) found.push(resolve(dirname(file), match[3] as string));
  }
  return found;
}

function requestHalf(...starts: string[]): string[] {
  const home = join(src, 'modules/broadcasts');
  const seen = new Set<string>();
  const stack = starts.map((start) => join(src, start));
  for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    if (dirname(file) === home) stack.push(...valueImports(file));
  }
  return [...seen]
    .map((file) => relative(src, file).split('\\').join('/'))
    .filter((file) => !file.endsWith('.schemas.ts') && !shell.some((part) => file.startsWith(part)))
    .sort();
}

describe("a broadcast's request half", () => {
  it('a send crosses at most 14 files, and never the retry', () => {
    const files = requestHalf('modules/broadcasts/send.routes.ts', 'modules/broadcasts/send.service.ts');
    expect(files).toEqual([
      'http/idempotency.ts',
      'modules/broadcasts/admission.ts',
      'modules/broadcasts/broadcasts.repo.ts',
      'modules/broadcasts/send.routes.ts',
      'modules/broadcasts/send.service.ts',
      'modules/contacts/contact-intake.ts',
      'modules/contacts/contact-lookup.repo.ts',
      'modules/messaging-accounts/admission.ts',
      'modules/messaging-accounts/window.repo.ts',
      'modules/recipients/broadcast-view.ts',
      'modules/recipients/recipient-queue.ts',
      'modules/templates/send-requirements.ts',
      'modules/templates/sendable.ts',
    ]);
    expect(files.length).toBeLessThanOrEqual(14);
  });

  it('an audience broadcast crosses at most 14 files', () => {
    const files = requestHalf('modules/broadcasts/audience.routes.ts', 'modules/broadcasts/audience.service.ts');
    expect(files).toEqual([
      'http/idempotency.ts',
      'modules/broadcasts/admission.ts',
      'modules/broadcasts/audience.routes.ts',
      'modules/broadcasts/audience.service.ts',
      'modules/broadcasts/broadcasts.repo.ts',
      'modules/contacts/contact-audience.ts',
      'modules/messaging-accounts/admission.ts',
      'modules/messaging-accounts/window.repo.ts',
      'modules/recipients/audience-components.ts',
      'modules/recipients/broadcast-view.ts',
      'modules/recipients/recipient-queue.ts',
      'modules/templates/sendable.ts',
    ]);
    expect(files.length).toBeLessThanOrEqual(14);
  });
});
