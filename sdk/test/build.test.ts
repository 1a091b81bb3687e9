// The SDK builds with tsc alone (ES2022, DOM lib, no Node types: a Node built-in fails to compile), its output
// imports nothing from Node, and it runs on the oldest Node it supports when one is on this machine.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'crm-sdk-build-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** A `node` on PATH older than the pinned one (the machine's own Node 20 or 22), if there is one. */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (version && /^v(20|21|22)\./.test(version)) return candidate;
  }
  return undefined;
}

describe('the SDK build', { timeout: 60_000 }, () => {
  it('compiles to ES2022 modules with declarations and no Node built-ins', async () => {
    const tsc = join(sdk, 'node_modules', '.bin', 'tsc');
    const build = spawnSync(tsc, ['-p', join(sdk, 'tsconfig.json'), '--outDir', outDir], { encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);
    const files = readdirSync(outDir);
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'client.js', 'webhooks.js']));
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const code = readFileSync(join(outDir, file), 'utf8');
      expect(code, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/);
      // Relative imports are rewritten to the emitted .js files, so the output runs without a bundler.
      expect(code, file).not.toMatch(/from ['"]\.\/[^'"]+\.ts['"]/);
    }
    const built = await import(pathToFileURL(join(outDir, 'index.js')).href);
    expect(Object.keys(built)).toEqual(
      expect.arrayContaining(['CrmClient', 'ApiError', 'RateLimitError', 'ValidationError', 'verifyWebhook']),
    );
  });

  const node = olderNode();
  it.skipIf(!node)(
    `runs on ${node ? spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim() : 'Node 20'}`,
    () => {
      const script = `
      const sdk = await import(${JSON.stringify(pathToFileURL(join(outDir, 'index.js')).href)});
      const secret = 'whsec_' + btoa('k'.repeat(32));
      const headers = await sdk.signWebhook({ secret, id: 'evt_1', body: '{"ok":true}' });
      const event = await sdk.verifyWebhook({ secret, headers, body: '{"ok":true}' });
      const client = new sdk.CrmClient({ apiKey: 'oak_x', baseUrl: 'http://127.0.0.1:9', fetch: async (url, init) =>
        new Response(JSON.stringify({ detail: 'not_found' }), { status: 404, headers: { 'x-request-id': 'req_1' } }) });
      const error = await client.contacts.get('ct_1').catch((caught) => caught);
      console.log(JSON.stringify({ event, name: error.name, code: error.code, requestId: error.requestId,
        key: sdk.newIdempotencyKey().length }));`;
      const run = spawnSync(node!, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        event: { ok: true },
        name: 'NotFoundError',
        code: 'not_found',
        requestId: 'req_1',
        key: 36,
      });
    },
  );
});
