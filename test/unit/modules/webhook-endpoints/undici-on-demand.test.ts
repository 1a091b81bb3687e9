// undici is loaded at the first webhook attempt, not with the server's modules (D362): the API process
// (`crm serve --no-worker`) wires the deliverer but never sends, and undici's 109 modules were ≈ 4 MB of its live heap
// under the read benchmark (51.0 against 46.8 MB). What the server's module graph loads is read in a fresh
// process: undici is CommonJS, so each of its files is in `require.cache` once loaded.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '../../../../src');

/** The undici files in `require.cache` of a fresh process after it imports `modules` (and runs `then`, if given). */
function undiciFilesAfter(modules: string[], then = ''): number {
  const imports = modules.map(
    (file, index) => `const m${index} = await import(${JSON.stringify(pathToFileURL(join(src, file)).href)});`,
  );
  const script = `import { createRequire } from 'node:module';
${imports.join('\n')}
${then}
const cache = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(String(cache.filter((file) => /[\\\\/]node_modules[\\\\/]undici[\\\\/]/.test(file)).length));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return Number(result.stdout);
}

describe('undici in the server process', () => {
  it('is not loaded by the server, the wiring or the deliveries until an attempt is made', () => {
    expect(undiciFilesAfter(['server.ts', 'wiring.ts', 'modules/webhook-endpoints/delivery-http.ts'])).toBe(0);
  });

  it('is loaded by the first attempt', () => {
    // An attempt to a refused address loads nothing; one to a closed local port (allow-listed) loads the client.
    const attempt = `const sender = m0.createWebhookSender({ allowHosts: ['127.0.0.1'], timeoutMs: 2000, idleSocketMs: 100 });
const answer = await sender.send({ url: 'http://127.0.0.1:9/hook', eventId: 'evt_1', body: '{}', secrets: ['whsec_AAAA'] });
sender.close();
if (answer.statusCode !== null || !answer.error.startsWith('connection failed')) throw new Error(JSON.stringify(answer));`;
    expect(undiciFilesAfter(['modules/webhook-endpoints/delivery-http.ts'], attempt)).toBeGreaterThan(0);
  });
});
