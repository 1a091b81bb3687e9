// Every TypeScript snippet of the README type-checks as an integrator's project would compile it: strict, against
// the built SDK (`npm run sdk:build`, the package `npm install` makes), with Node's types. And the SDK's
// `WebhookEvent` is a union narrowed by `type`, each type's `data` typed from the OpenAPI document (D231).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The README's ```ts blocks, each with the heading it sits under (a `#` line inside another block is not one). */
function readmeSnippets(readme: string): { heading: string; code: string }[] {
  const snippets: { heading: string; code: string }[] = [];
  let heading = '';
  for (const match of readme.matchAll(/^(#{1,6} .*)$|^```(\w*)\n([\s\S]*?)^```$/gm)) {
    if (match[1]) heading = match[1];
    else if (match[2] === 'ts' || match[2] === 'typescript') snippets.push({ heading, code: match[3] ?? '' });
  }
  return snippets;
}

/** Type-checks the files (name -> source) with strict options; tsc's diagnostics, empty when they compile. */
function typeCheck(files: Record<string, string>): string {
  expect(existsSync(join(root, 'sdk/dist/index.d.ts')), 'run `npm run sdk:build`').toBe(true);
  const dir = mkdtempSync(join(tmpdir(), 'readme-snippets-'));
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        lib: ['es2022', 'dom'],
        module: 'esnext',
        moduleResolution: 'bundler',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
        paths: { '@crm-messaging/sdk': [join(root, 'sdk/dist/index.d.ts')] },
      },
      files: Object.keys(files),
    }),
  );
  const result = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', dir, '--pretty', 'false'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return `${result.stdout}${result.stderr}`;
}

it('compiles every TypeScript snippet of the README with strict options', { timeout: 60_000 }, () => {
  const snippets = readmeSnippets(readFileSync(join(root, 'README.md'), 'utf8'));
  expect(snippets.length).toBeGreaterThanOrEqual(4);
  // Each snippet is a module of its own (`export {}`): top-level await, and no names shared between snippets.
  const files = Object.fromEntries(snippets.map(({ code }, index) => [`snippet-${index}.ts`, `${code}\nexport {};\n`]));
  const diagnostics = typeCheck(files);
  const where = snippets.map(({ heading }, index) => `snippet-${index}.ts: under "${heading}"`).join('\n');
  expect(diagnostics, `${where}\n`).toBe('');
});

it('keeps every table row of the README inside its table', () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  let fenced = false;
  const strays: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || !line.startsWith('|')) continue;
    // A row follows another row, or starts a table: a header followed by its |---| line.
    const previous = lines[index - 1] ?? '';
    const next = lines[index + 1] ?? '';
    if (!previous.startsWith('|') && !/^\|(\s*:?-+:?\s*\|)+$/.test(next)) strays.push(`line ${index + 1}: ${line}`);
  }
  expect(strays).toEqual([]);
});

it('narrows a WebhookEvent by its type, with each data typed', { timeout: 60_000 }, () => {
  const diagnostics = typeCheck({
    'narrowing.ts': `
import { type WebhookEvent, type WebhookEventOf, verifyWebhook } from '@crm-messaging/sdk';

export function handle(event: WebhookEvent): string {
  switch (event.type) {
    case 'message.received':
      return event.data.conversation_id;
    case 'contact.created':
    case 'contact.updated':
      return event.data.email ?? event.data.id;
    case 'contact.deleted':
      // @ts-expect-error a deleted contact's data is only its id
      return event.data.email;
    case 'broadcast.recipient.updated':
      return event.data.broadcast_id + event.data.status;
    case 'ping':
      return event.data.endpoint_id;
    default:
      return event.type;
  }
}

// @ts-expect-error not an event type
export const unknown: WebhookEventOf<'contact.exploded'> | undefined = undefined;
export const finished: WebhookEventOf<'broadcast.finished'>['data']['status'] = 'completed';
export const verified: Promise<WebhookEvent> = verifyWebhook({ secret: 'whsec_', headers: {}, body: '' });
// @ts-expect-error a union member does not accept another type's data
export const wrong: WebhookEvent = { id: 'evt_1', type: 'contact.deleted', created_at: '', data: { endpoint_id: 'we_1' } };
`,
  });
  expect(diagnostics).toBe('');
});
