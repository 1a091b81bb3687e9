// Generators take the served document as it is: openapi-typescript turns it into types that a small client
// type-checks against, and Redocly's recommended ruleset finds no error in it (D17).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
// The SDK's own generator (its workspace keeps openapi-typescript beside the TypeScript 5 API it needs).
const openapiTypescript = join(root, 'sdk/node_modules/openapi-typescript/bin/cli.js');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const redocly = join(root, 'node_modules/@redocly/cli/bin/cli.js');
const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

let h: Harness;
let dir: string;
let documentFile: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  dir = await mkdtemp(join(tmpdir(), 'crm-openapi-'));
  documentFile = join(dir, 'openapi.json');
  await writeFile(documentFile, (await h.api('GET', '/v1/openapi.json')).text);
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

// A client an integrator would write against the generated types; the last lines must NOT type-check.
const client = `import type { components, operations, paths } from './schema.ts';

type Contact = components['schemas']['Contact'];
type SendRequest = components['schemas']['SendRequest'];
type ContactList = paths['/v1/contacts']['get']['responses']['200']['content']['application/json'];
type ListQuery = NonNullable<operations['listContacts']['parameters']['query']>;

export async function firstSend(base: string, key: string, templateId: string): Promise<string> {
  const body: SendRequest = { recipients: [{ phone: '+15551234567', variables: { 'body.1': 'Ana' } }] };
  const response = await fetch(\`\${base}/v1/templates/\${templateId}/send\`, {
    method: 'POST',
    headers: { authorization: \`Bearer \${key}\`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const broadcast = (await response.json()) as components['schemas']['Broadcast'];
  return \`\${broadcast.id} \${broadcast.pending} \${broadcast.status}\`;
}

export function names(page: ContactList): string[] {
  const query: ListQuery = { origin: ['API', 'WEB'] };
  void query;
  return page.items.map((contact: Contact) => \`\${contact.first_name ?? ''} \${contact.messaging_status}\`);
}

export function detail(error: components['schemas']['Error']): string {
  return typeof error.detail === 'string' ? error.detail : Array.isArray(error.detail) ? 'validation' : error.detail.code;
}

// @ts-expect-error: a contact has no such field, so the generated types are real, not \`any\`.
export const wrong = (contact: Contact) => contact.no_such_field;
// @ts-expect-error: a send needs recipients.
export const missing: SendRequest = {};
`;

describe('openapi-typescript', () => {
  it('generates types from the served document that a small client type-checks against', async () => {
    const schema = join(dir, 'schema.ts');
    await run(process.execPath, [openapiTypescript, documentFile, '--output', schema], { env: quiet });
    await writeFile(join(dir, 'client.ts'), client);
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022,dom'];
    const flags = [...args, '--module', 'preserve', '--moduleResolution', 'bundler', '--allowImportingTsExtensions'];
    const result = await run(process.execPath, [tsc, ...flags, '--types', '', join(dir, 'client.ts')], {
      cwd: dir,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout, stderr: error.stderr }));
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`.trim()).toBe('');
  });
});

async function lint(file: string) {
  const args = [redocly, 'lint', file, '--extends', 'recommended', '--format', 'json'];
  // Redocly exits 1 when it finds errors; the JSON report is on stdout either way.
  const { stdout } = await run(process.execPath, args, { env: quiet, cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout: string }) => error,
  );
  return JSON.parse(stdout) as { totals: { errors: number }; problems: { severity: string; ruleId: string }[] };
}

describe('Redocly lint', () => {
  it('reports no error with the recommended ruleset', async () => {
    const report = await lint(documentFile);
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('would report one: a copy whose operation has two identical operation ids fails', async () => {
    const broken = JSON.parse(await readFile(documentFile, 'utf8'));
    broken.paths['/v1/contacts'].post.operationId = broken.paths['/v1/contacts'].get.operationId;
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify(broken));
    expect((await lint(file)).totals.errors).toBeGreaterThan(0);
  });
});
