// The server's heap flags (bin/node-flags.js, decisions D194): a process started without them runs again in its own
// place with them; flags given on node's command line or in NODE_OPTIONS are the operator's and stay.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { missingServerFlags, SERVER_NODE_FLAGS } from '../../bin/node-flags.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-node-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A script that takes the server's flags and tells what it runs with. */
const script = join(dir, 'role.mjs');
writeFileSync(
  script,
  `import v8 from 'node:v8';
import { withServerFlags } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../bin/node-flags.js')).href)};
withServerFlags();
process.stdout.write(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, args: process.argv.slice(2),
  limitMb: v8.getHeapStatistics().heap_size_limit / 1048576 }));
`,
);

function run(nodeArgs: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [...nodeArgs, script, 'serve', '--no-worker'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { pid: number; execArgv: string[]; args: string[]; limitMb: number };
}

describe('the server heap flags', () => {
  it('are added in the same process when node was started without them, the arguments kept', () => {
    const ran = run([]);
    expect(ran.execArgv).toEqual([...SERVER_NODE_FLAGS]);
    expect(ran.args).toEqual(['serve', '--no-worker']);
    expect(ran.limitMb).toBeLessThan(2100);
  });

  it('leave flags given on the command line or in NODE_OPTIONS as they are', () => {
    expect(run([...SERVER_NODE_FLAGS]).execArgv).toEqual([...SERVER_NODE_FLAGS]);
    const operator = run([], { NODE_OPTIONS: '--max-old-space-size=300' });
    expect(operator.execArgv).toEqual(SERVER_NODE_FLAGS.filter((flag) => flag.startsWith('--max-semi-space-size')));
    expect(operator.limitMb).toBeLessThan(400);
    expect(missingServerFlags(['--max_old_space_size=2000', '--max-semi-space-size=8'], '')).toEqual([]);
  });
});
