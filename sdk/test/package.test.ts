// The SDK as an integrator gets it: `npm pack` gives a tarball (MIT, the API's version, JavaScript for ES modules and
// CommonJS, types, README, source maps whose sources are in the tarball) that installs offline into a fresh
// TypeScript project, type-checks there under module resolution node16 and bundler, and runs from ESM and CJS.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const root = join(sdk, '..');
const tsc = join(sdk, 'node_modules', '.bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'crm-sdk-pack-'));
const project = join(work, 'project');
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout;
}

let tarball: string;
let files: string[];
beforeAll(() => {
  // `prepack` builds dist/ first (ESM, CJS, declarations, maps).
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], sdk)) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(work, packed!.filename);
  files = packed!.files.map((file) => file.path);
  mkdirSync(join(project, 'unpacked'), { recursive: true });
  run('tar', ['-xzf', tarball, '-C', join(project, 'unpacked')], work);
}, 120_000);

describe('the packed SDK', { timeout: 120_000 }, () => {
  it("is MIT, carries the API's version, and ships JavaScript, types, README, LICENSE and the maps' sources", () => {
    const manifest = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8'));
    const app = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ license: 'MIT', version: app.version });
    expect(manifest.private).toBeUndefined();
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
        'dist/cjs/package.json',
        'src/index.ts',
      ]),
    );
    expect(files.filter((file) => /(^|\/)test\/|scripts\/|tsconfig/.test(file))).toEqual([]);
    const maps = files.filter((file) => file.endsWith('.map'));
    expect(maps.length).toBeGreaterThanOrEqual(16);
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(project, 'unpacked', 'package', map), 'utf8'));
      for (const source of sources as string[]) {
        expect(files, `${map} -> ${source}`).toContain(posix.normalize(posix.join(posix.dirname(map), source)));
      }
    }
  });

  it('installs offline into a fresh TypeScript project, type-checks (node16, bundler) and runs from ESM and CJS', () => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], project);
    expect(existsSync(join(project, 'node_modules/@crm-messaging/sdk/dist/cjs/index.js'))).toBe(true);

    // The same program from both module systems: a typed call answered by a fake fetch, a typed error, a webhook.
    const program = (from: string) => `${from}
const secret = 'whsec_' + btoa('k'.repeat(32));
async function main(): Promise<void> {
  const crm = new CrmClient({
    apiKey: 'oak_x',
    fetch: async () => new Response(JSON.stringify({ detail: 'not_found' }), { status: 404 }),
  });
  const error: unknown = await crm.contacts.get('ct_1').catch((caught: unknown) => caught);
  const found: Contact | undefined = undefined;
  const headers = await signWebhook({ secret, id: 'evt_1', body: '{"ok":true}' });
  const event = await verifyWebhook({ secret, headers, body: '{"ok":true}' });
  const endpoints: Promise<unknown> = crm.webhookEndpoints.list().catch(() => null);
  await endpoints;
  console.log(JSON.stringify({
    notFound: error instanceof NotFoundError && error instanceof ApiError,
    code: error instanceof ApiError ? error.code : null,
    event,
    found: found ?? null,
  }));
}
void main();
`;
    const names = 'ApiError, type Contact, CrmClient, NotFoundError, signWebhook, verifyWebhook';
    writeFileSync(join(project, 'esm.mts'), program(`import { ${names} } from '@crm-messaging/sdk';`));
    writeFileSync(join(project, 'cjs.cts'), program(`import { ${names} } from '@crm-messaging/sdk';`));
    // A plain CommonJS consumer, no TypeScript: require() of the package.
    writeFileSync(
      join(project, 'plain.cjs'),
      `const sdk = require('@crm-messaging/sdk');
       console.log(JSON.stringify({ client: typeof sdk.CrmClient, key: sdk.newIdempotencyKey().length }));`,
    );
    const compilerOptions = { strict: true, target: 'es2022', skipLibCheck: false, types: [] };
    const configs = {
      'tsconfig.node16.json': { module: 'node16', moduleResolution: 'node16', outDir: 'out' },
      'tsconfig.bundler.json': { module: 'preserve', moduleResolution: 'bundler', noEmit: true },
    };
    for (const [name, options] of Object.entries(configs)) {
      writeFileSync(
        join(project, name),
        JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, files: ['esm.mts', 'cjs.cts'] }),
      );
      run(tsc, ['-p', name], project);
    }
    // node16 emits esm.mjs as an ES module and cjs.cjs with require(): each loads its own build of the package.
    expect(readFileSync(join(project, 'out/cjs.cjs'), 'utf8')).toMatch(/require\("@crm-messaging\/sdk"\)/);
    const expected = { notFound: true, code: 'not_found', event: { ok: true }, found: null };
    for (const node of nodes()) {
      for (const file of ['out/esm.mjs', 'out/cjs.cjs']) {
        expect(JSON.parse(run(node, [file], project)), `${node} ${file}`).toEqual(expected);
      }
      expect(JSON.parse(run(node, ['plain.cjs'], project))).toEqual({ client: 'function', key: 36 });
    }
  });
});

/** This Node, and the oldest supported one (20) when it is on PATH. */
function nodes(): string[] {
  const found = [process.execPath];
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = join(dir, 'node');
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (version?.startsWith('v20.')) return [...found, candidate];
  }
  return found;
}
