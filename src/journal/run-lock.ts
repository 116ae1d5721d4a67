// One process at a time drives a run. The lock is a file in the common git dir naming its owner
// (pid, host, process start time); a lock whose owner is dead, or whose pid now belongs to another
// process, is taken over. Locks live outside the branch: they are local to this machine.
import { hostname } from 'node:os';
import { linkSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { RunLockedError, type RunLockOwner } from '../errors/index.js';
import { unlinkQuietly, writeFileDurably } from './durable-file.js';

interface LockContent extends RunLockOwner {
  // Start time of the owning process (Linux), so a reused pid is not mistaken for the owner.
  startTime?: string;
  token: string;
}

// A held run lock; `release` is idempotent and also runs if the process exits normally.
export interface RunLock {
  path: string;
  release(): void;
}

// Takes the lock of `run`, or throws RunLockedError naming the live process that holds it.
export function acquireRunLock(commonDir: string, run: string): RunLock {
  const path = join(commonDir, 'savepoint', 'locks', `${run}.lock`);
  const mine: LockContent = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    startTime: processStartTime(process.pid),
    token: `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
  };
  const text = `${JSON.stringify(mine)}\n`;
  const temp = `${path}.tmp-${mine.token}`;
  writeFileDurably(temp, text, { dirs: null }); // linked as the lock, then removed: only its content matters
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(temp, path); // exclusive create with the content already in place
        return holdLock(path, text);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const found = readQuietly(path);
      if (found === undefined) continue; // released in between
      const owner = parseOwner(found);
      if (owner && isAlive(owner)) throw new RunLockedError(run, owner, path);
      takeOver(path, found);
    }
    const owner = parseOwner(readQuietly(path) ?? '');
    throw new RunLockedError(run, owner ?? { pid: 0, host: 'unknown', since: 'unknown' }, path);
  } finally {
    unlinkQuietly(temp);
  }
}

function holdLock(path: string, text: string): RunLock {
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    if (readQuietly(path) === text) unlinkSync(path);
  };
  process.on('exit', release);
  return { path, release };
}

// Moves a dead owner's lock aside. If, in the instant between reading and moving, a live process
// had already replaced it, the live lock is put back.
function takeOver(path: string, deadContent: string): void {
  const aside = `${path}.dead-${process.pid}-${Date.now()}`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  if (readQuietly(aside) !== deadContent) {
    try {
      linkSync(aside, path);
    } catch {
      // someone else holds it now; their claim stands
    }
  }
  unlinkQuietly(aside);
}

function parseOwner(text: string): LockContent | undefined {
  try {
    const value = JSON.parse(text) as LockContent;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? value : undefined;
  } catch {
    return undefined; // a torn lock from a crash while writing: treat as dead
  }
}

function isAlive(owner: LockContent): boolean {
  if (owner.host !== hostname()) return true; // cannot check another machine's processes
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const fields = procStat(owner.pid);
  if (fields?.[0] === 'Z') return false; // killed, not yet reaped by its parent
  const start = fields?.[19];
  return owner.startTime === undefined || start === undefined || start === owner.startTime;
}

// The fields of /proc/<pid>/stat after the command name (Linux only): [0] is the state, [19] the
// start time in clock ticks since boot.
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

function readQuietly(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

// The live process that holds the lock of `run` (read only, for `savepoint runs`), or undefined
// when the run is not locked or its lock was left by a dead process.
export function runLockHolder(commonDir: string, run: string): RunLockOwner | undefined {
  const found = readQuietly(join(commonDir, 'savepoint', 'locks', `${run}.lock`));
  const owner = found === undefined ? undefined : parseOwner(found);
  return owner && isAlive(owner) ? { pid: owner.pid, host: owner.host, since: owner.since } : undefined;
}
