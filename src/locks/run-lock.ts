// One process at a time drives a run. The lock is a file in the common git dir naming its owner,
// taken by exclusive create; locks live outside the branch (they are local to this .git).
//
// Whether the owner is still alive is decided without trusting pids or host names alone: a pid
// means something only in its own pid namespace of its own boot, and two containers (or a host and
// its devcontainer) can share a host name and a .git while their pids mean different processes.
//   - The owner renews a lease: it touches the lock file's mtime every LEASE/6 (5 s by default).
//   - Same boot id and same pid namespace as the owner (/proc/sys/kernel/random/boot_id,
//     /proc/self/ns/pid): its pid and start time are checked, so a crashed owner's lock is taken
//     over at once, and a running one is never taken whatever its lease says (its event loop may
//     be blocked for a while). A stopped one (SIGSTOP, Ctrl-Z, a debugger: state T in /proc) is
//     taken once its lease ran out, as from anywhere else: it may stay stopped for ever, and the
//     fence at the append (journal/store.ts) makes it stop when it wakes.
//   - Anywhere else (another container, another machine over a shared file system, no /proc), only
//     the lease counts: a lock not renewed for LEASE (30 s by default, SAVEPOINT_RUN_LOCK_LEASE_MS)
//     is stale and taken over. The lease assumes the clocks agree to well within LEASE.
// The owner checks the lock is still its own before every append (`check`), so a holder whose lease
// lapsed (its event loop blocked for LEASE) stops with RunLockLostError instead of writing beside a
// new owner.
// A renewal that finds the lock another's twice in a row tells `onLost`: the run was taken over
// while this process was stopped, and the commands it still runs are stopped (valve/run-journal.ts).
import { hostname } from 'node:os';
import { linkSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { RunLockedError, RunLockLostError, type RunLockOwner } from '../errors/index.js';
import { unlinkQuietly, writeFileAtomically } from '../os/durable-file.js';
import { readQuietly, takeOverLock } from './lock-file.js';
import { isStopped, pidMeansHere, stillRuns, thisProcess, type ProcessIdentity } from '../os/proc.js';

/** How long a lock whose owner cannot be checked by pid stays valid without renewal, by default. */
export const DEFAULT_RUN_LOCK_LEASE_MS = 30_000;

interface LockContent extends RunLockOwner, ProcessIdentity {
  /** The lease the owner renews (ms): its lock is stale once its mtime is older than this. */
  leaseMs?: number;
  token: string;
}

/** A held run lock; `release` is idempotent and also runs if the process exits normally. */
export interface RunLock {
  path: string;
  release(): void;
  /**
   * Throws RunLockLostError when the lock is no longer this process's (taken over as stale). A
   * function of its own (no `this`): the valve hands it down to the store, which asks it before
   * every append.
   */
  readonly check: () => void;
  /**
   * Calls `handler` once the renewal finds the lock another's (or gone) twice in a row: the run was
   * taken over while this process was paused, and what it still has running must stop.
   */
  onLost(handler: () => void): void;
}

/** Takes the lock of `run`, or throws RunLockedError naming the live process that holds it. */
export function acquireRunLock(commonDir: string, run: string): RunLock {
  const path = lockPathOf(commonDir, run);
  const leaseMs = leaseFromEnv();
  const mine: LockContent = {
    ...thisProcess(),
    host: hostname(),
    since: new Date().toISOString(),
    leaseMs,
    token: `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
  };
  const text = `${JSON.stringify(mine)}\n`;
  const temp = `${path}.tmp-${mine.token}`;
  // Linked as the lock, then removed: only its content matters, and only to live processes. No
  // fsync: after a power cut its owner is dead, and a lock whose content was lost is taken over.
  writeFileAtomically(temp, text);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(temp, path); // exclusive create with the content already in place
        return holdLock(run, path, text, leaseMs);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const found = readQuietly(path);
      if (found === undefined) continue; // released in between
      const owner = parseOwner(found);
      if (owner && isAlive(owner, path)) throw new RunLockedError(run, owner, path);
      // Put back if its owner renewed its lease in the instant before the move.
      takeOverLock(path, found, (aside) => owner !== undefined && isAlive(owner, aside));
    }
    const owner = parseOwner(readQuietly(path) ?? '');
    throw new RunLockedError(run, owner ?? { pid: 0, host: 'unknown', since: 'unknown' }, path);
  } finally {
    unlinkQuietly(temp);
  }
}

function holdLock(run: string, path: string, text: string, leaseMs: number): RunLock {
  let held = true;
  let missed = 0; // renewals in a row that found the lock not this process's
  const losers: Array<() => void> = [];
  const renew = () => {
    if (readQuietly(path) !== text) {
      // Moved aside for a moment (a taker puts back a lock renewed meanwhile, at once), or taken:
      // twice in a row, a lease period apart, it is taken.
      if (++missed === 2) {
        clearInterval(timer);
        for (const handler of losers.splice(0)) handler();
      }
      return;
    }
    missed = 0;
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // gone in between; the next round or `check` sees it
    }
  };
  const timer = setInterval(renew, Math.max(10, Math.floor(leaseMs / 6)));
  timer.unref();
  const release = () => {
    if (!held) return;
    held = false;
    clearInterval(timer);
    process.off('exit', release);
    try {
      if (readQuietly(path) === text) unlinkSync(path);
    } catch {
      // A disk gone read-only (or away) keeps the lock file: its owner is dead by then, which is
      // all the next process to take it over checks for.
    }
  };
  const check = () => {
    if (!held || readQuietly(path) === text) return;
    // A taker that found it stale moves it aside and puts it back if it was renewed meanwhile:
    // give that instant a moment before concluding.
    const until = Date.now() + 50;
    while (Date.now() < until) if (readQuietly(path) === text) return;
    throw new RunLockLostError(run, path, parseOwner(readQuietly(path) ?? ''));
  };
  process.on('exit', release);
  return { path, release, check, onLost: (handler) => void losers.push(handler) };
}

function parseOwner(text: string): LockContent | undefined {
  try {
    const value = JSON.parse(text) as LockContent;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? value : undefined;
  } catch {
    return undefined; // a torn lock from a crash while writing: treat as dead
  }
}

// The pid is checked only where it means the owner's process: same boot, same pid namespace; a
// stopped owner there is judged by its lease. Elsewhere the lease decides. A lock file that is gone has no live owner.
function isAlive(owner: LockContent, path: string): boolean {
  if (pidMeansHere(owner)) {
    if (!stillRuns(owner)) return false;
    if (!isStopped(owner.pid)) return true;
  }
  return leaseHolds(owner, path);
}

// Whether the lock at `path` was renewed within its owner's lease.
function leaseHolds(owner: LockContent, path: string): boolean {
  let mtime: number;
  try {
    mtime = statSync(path).mtimeMs;
  } catch {
    return false;
  }
  return Date.now() - mtime < (owner.leaseMs ?? DEFAULT_RUN_LOCK_LEASE_MS);
}

function leaseFromEnv(): number {
  const value = Number(process.env.SAVEPOINT_RUN_LOCK_LEASE_MS);
  return Number.isFinite(value) && value >= 60 ? value : DEFAULT_RUN_LOCK_LEASE_MS;
}

function lockPathOf(commonDir: string, run: string): string {
  return join(commonDir, 'savepoint', 'locks', `${run}.lock`);
}

/**
 * The live process that holds the lock of `run` (read only, for `savepoint runs`), or undefined
 * when the run is not locked or its lock was left by a dead process (or its lease ran out).
 */
export function runLockHolder(commonDir: string, run: string): RunLockOwner | undefined {
  const path = lockPathOf(commonDir, run);
  const found = readQuietly(path);
  const owner = found === undefined ? undefined : parseOwner(found);
  return owner && isAlive(owner, path) ? { pid: owner.pid, host: owner.host, since: owner.since } : undefined;
}
