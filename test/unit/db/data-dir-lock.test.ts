// The embedded database's lock within one process; the same across real processes is in test/process/cli.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir, withDataDirLock } from '../../../src/db/data-dir-lock.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const deadPid = () =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'crm.lock'), 'utf8'));

describe('the data dir lock', () => {
  it('writes our pid, refuses a second holder (even in this process), and is free again once released', async () => {
    const dir = tempDir('crm-lock-test-');
    const lock = await lockDataDir(dir);
    expect(lockOf(dir).pid).toBe(process.pid);
    const refused = await lockDataDir(dir).catch((error) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect(refused).toMatchObject({ pid: process.pid, dataDir: dir });
    expect(refused.message).toContain('in use by another process');
    lock.release();
    expect(existsSync(join(dir, 'crm.lock'))).toBe(false);
    (await lockDataDir(dir)).release();
  });

  it('refuses a lock held by another live process', async () => {
    const dir = tempDir('crm-lock-test-');
    writeFileSync(join(dir, 'crm.lock'), JSON.stringify({ pid: process.ppid, command: 'src/main.ts' }));
    await expect(lockDataDir(dir)).rejects.toThrow(`(pid ${process.ppid}: src/main.ts)`);
    expect(lockOf(dir).pid).toBe(process.ppid);
  });

  it('takes over a lock of a dead pid, an unreadable lock, and our own pid left by an earlier life', async () => {
    for (const content of [JSON.stringify({ pid: deadPid() }), 'garbage', JSON.stringify({ pid: process.pid })]) {
      const dir = tempDir('crm-lock-test-');
      writeFileSync(join(dir, 'crm.lock'), content);
      const lock = await lockDataDir(dir);
      expect(lockOf(dir).pid).toBe(process.pid);
      lock.release();
    }
  });

  it('gives a stale lock to exactly one of many callers at once', async () => {
    const dir = tempDir('crm-lock-test-');
    writeFileSync(join(dir, 'crm.lock'), JSON.stringify({ pid: deadPid() }));
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => lockDataDir(dir)));
    const won = results.filter((result) => result.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DataDirLockedError);
    (won[0] as PromiseFulfilledResult<{ release(): void }>).value.release();
  });

  it('never removes a lock that another process took over after ours', async () => {
    const dir = tempDir('crm-lock-test-');
    const lock = await lockDataDir(dir);
    const other = JSON.stringify({ pid: process.ppid });
    writeFileSync(join(dir, 'crm.lock'), other);
    lock.release();
    expect(readFileSync(join(dir, 'crm.lock'), 'utf8')).toBe(other);
  });

  it('holds the lock while a database is open and releases it on close, or when opening fails', async () => {
    const dir = tempDir('crm-lock-test-');
    let closed = false;
    const database = await withDataDirLock(dir, async () => ({
      close: async () => {
        closed = true;
      },
    }));
    expect(lockOf(dir).pid).toBe(process.pid);
    await database.close();
    expect(closed).toBe(true);
    expect(existsSync(join(dir, 'crm.lock'))).toBe(false);
    await expect(withDataDirLock(dir, () => Promise.reject(new Error('corrupt')))).rejects.toThrow('corrupt');
    expect(existsSync(join(dir, 'crm.lock'))).toBe(false);
    expect(await withDataDirLock('memory://', async () => ({ close: async () => {} }))).toBeDefined();
  });
});
