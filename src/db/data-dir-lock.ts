// One process at a time on an embedded database: PGlite is one process's database, and a second process writing
// the same DATA_DIR (a `crm key create` beside a running server) loses its writes without a word. The process that
// opens the directory writes its pid into `DATA_DIR/crm.lock` and removes it on close; another process that finds
// the lock held by a live pid refuses with DataDirLockedError. A lock left by a dead pid (a SIGKILL, a crash) is
// taken over.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const LOCK_FILE = 'crm.lock';

export class DataDirLockedError extends Error {
  readonly dataDir: string;
  readonly pid: number;
  constructor(dataDir: string, pid: number, command: string | undefined) {
    super(
      `the embedded database in ${dataDir} is in use by another process (pid ${pid}${command ? `: ${command}` : ''}). ` +
        'PGlite is one process’s database: stop that process first, or, while a server runs, make changes ' +
        'through its API (/admin/v1 with ADMIN_TOKEN). ' +
        `If no such process runs, delete ${join(dataDir, LOCK_FILE)}.`,
    );
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

interface Holder {
  pid: number;
  command?: string;
  raw: string;
}

/** Directories this process holds: a lock naming our own pid that we do not hold is a previous life's (pid reuse). */
const held = new Set<string>();

function readHolder(path: string): Holder | null {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(raw) as { pid?: unknown; command?: unknown };
    if (typeof parsed.pid === 'number') {
      return { pid: parsed.pid, raw, ...(typeof parsed.command === 'string' ? { command: parsed.command } : {}) };
    }
  } catch {
    // A torn or foreign file: treated as a dead holder, so it is taken over.
  }
  return { pid: 0, raw };
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

const ATTEMPTS = 100;

/**
 * Takes the lock of `dataDir` or throws DataDirLockedError. The lock file appears whole or not at all (written
 * aside, then hard-linked into place, which fails when it exists). A stale lock is removed by one process at a
 * time: the one that creates `crm.lock.takeover-<dead pid>` re-reads the lock and removes it only if the dead
 * pid still holds it; then every contender tries the link again and exactly one wins.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): void }> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, LOCK_FILE);
  const content = JSON.stringify({ pid: process.pid, command: process.argv.slice(1).join(' '), at: new Date() });
  const pending = `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(pending, content);
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        linkSync(pending, lockPath);
        held.add(dir);
        return { release: () => releaseLock(dir, lockPath, content) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readHolder(lockPath);
      if (!holder) continue;
      const ours = holder.pid === process.pid && !held.has(dir);
      if (!ours && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder.pid, holder.command);
      const marker = `${lockPath}.takeover-${holder.pid}`;
      try {
        writeFileSync(marker, JSON.stringify({ pid: process.pid }), { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        // Another process is taking over; a marker whose taker died mid-way is cleared after a while.
        if (attempt > ATTEMPTS / 2 && !isAlive(readHolder(marker)?.pid ?? 0)) unlinkQuietly(marker);
        await sleep(10 + Math.random() * 20);
        continue;
      }
      try {
        if (readHolder(lockPath)?.raw === holder.raw) unlinkQuietly(lockPath);
      } finally {
        unlinkQuietly(marker);
      }
    }
    throw new Error(`could not take the lock ${lockPath} after ${ATTEMPTS} attempts`);
  } finally {
    unlinkQuietly(pending);
  }
}

function releaseLock(dir: string, lockPath: string, content: string): void {
  if (!held.delete(dir)) return;
  // Only our own lock is removed, never one that a later process took over.
  if (readHolder(lockPath)?.raw === content) unlinkQuietly(lockPath);
}

/** Opens a database on `dataDir` under its lock (in-memory PGlite needs none); closing it releases the lock. */
export async function withDataDirLock<T extends { close(): Promise<void> }>(
  dataDir: string,
  open: (dataDir: string) => Promise<T>,
): Promise<T> {
  if (dataDir.startsWith('memory://')) return open(dataDir);
  const lock = await lockDataDir(dataDir);
  let database: T;
  try {
    database = await open(dataDir);
  } catch (error) {
    lock.release();
    throw error;
  }
  const close = database.close.bind(database);
  database.close = async () => {
    try {
      await close();
    } finally {
      lock.release();
    }
  };
  return database;
}
