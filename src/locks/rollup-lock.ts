// One pack roll-up at a time per objects directory, across processes. Several runs may share the
// journal, and each process rolls up the pack directory's small packs in the background: two at
// once would both read, deltify and write the same packs (seconds of CPU each on a large roll-up,
// beside the runs' own steps), and one could remove a pack the other is still renaming, leaving an
// .idx without its .pack. Nothing is lost either way (a roll-up removes packs only once its own is
// durable), so the lock only spares that work: a process that finds it held skips its roll-up, and
// its next append looks again. A holder is checked the way a run lock's is (proc.ts): its pid must
// still be that process (same start time, same boot and pid namespace); elsewhere (another
// container) the lock counts as held until STALE_ROLLUP_LOCK_MS have passed since its holder last
// touched it, which it does every ROLLUP_LOCK_TOUCH_MS while it rolls up: a holder killed there
// holds up this side's roll-ups for two minutes at most, not long enough for packs to pile up.
import { closeSync, openSync, statSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { unlinkQuietly } from '../os/durable-file.js';
import { readQuietly, takeOverLock } from './lock-file.js';
import { pidMeansHere, stillRuns, thisProcess, type ProcessIdentity } from '../os/proc.js';

/**
 * The lock's file, in objects/ itself: git ignores files there (`fsck` and `count-objects` look only
 * in the fan-out and pack directories), and leftovers.ts's patterns do not match it.
 */
export const ROLLUP_LOCK_NAME = 'tmp_rollup.lock';

/** A roll-up lock untouched for this long is stale whoever holds it: its holder touches it more often. */
export const STALE_ROLLUP_LOCK_MS = 2 * 60_000;

/** How often a holder touches its lock while it rolls up (a large roll-up by git takes seconds). */
const ROLLUP_LOCK_TOUCH_MS = 20_000;

/** A held roll-up lock: release() removes it, if it is still this process's. */
export interface RollupLock {
  release(): void;
}

/**
 * Takes the roll-up lock of the objects directory `objectsDir`, or returns undefined when another
 * live process holds it (or the lock cannot be written: a read-only repository rolls nothing up).
 * A lock whose holder is gone is taken over.
 */
export function tryRollupLock(objectsDir: string): RollupLock | undefined {
  const path = join(objectsDir, ROLLUP_LOCK_NAME);
  const content = `${JSON.stringify(thisProcess())}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0 || !takeOverIfDead(path)) return undefined;
      continue;
    }
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    const touching = setInterval(() => {
      const now = new Date();
      try {
        utimesSync(path, now, now);
      } catch {
        // taken over or removed: release() checks
      }
    }, ROLLUP_LOCK_TOUCH_MS).unref();
    return {
      release: () => {
        clearInterval(touching);
        if (readQuietly(path) === content) unlinkQuietly(path);
      },
    };
  }
  return undefined;
}

// Takes over the lock at `path` when its holder is gone; whether it did.
function takeOverIfDead(path: string): boolean {
  const seen = readQuietly(path);
  return seen !== undefined && !holderAlive(path, seen) && takeOverLock(path, seen);
}

function holderAlive(path: string, text: string): boolean {
  let age: number;
  try {
    age = Date.now() - statSync(path).mtimeMs;
  } catch {
    return false;
  }
  if (age > STALE_ROLLUP_LOCK_MS) return false;
  let holder: ProcessIdentity | null;
  try {
    holder = JSON.parse(text) as ProcessIdentity | null;
  } catch {
    return age < 5_000; // being written (or damaged): give the writer a moment, then take it
  }
  // Another machine, boot or container: only the age tells.
  return typeof holder?.pid !== 'number' || !pidMeansHere(holder) || stillRuns(holder);
}
