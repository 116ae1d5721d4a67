// One live run at a time in a working tree. Two runs editing the same files overwrite each other's
// edits, and a restore or drift check by one (which takes the whole tree as its own) would undo
// what the other had finished and recorded. So a run that may go live holds its working tree with
// a lock in that worktree's own git dir (a linked worktree has its own, so `git worktree add` is the
// way to run two at once); it is the same kind of lock as a run's, taken over when its owner died.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunLockedError, WorktreeBusyError } from '../errors/index.js';
import type { Repository } from '../git/repository.js';
import { acquireRunLock, type RunLock } from '../locks/run-lock.js';

// The lock's name among run locks: no run id can start with "_".
const LOCK_NAME = '_worktree';

/** Holds the working tree of `repo` for run `run`, or throws WorktreeBusyError naming the live run that holds it. */
export function holdWorktree(repo: Repository, run: string): RunLock {
  const holderFile = join(repo.gitdir, 'savepoint', 'locks', `${LOCK_NAME}.run`);
  let lock: RunLock;
  try {
    lock = acquireRunLock(repo.gitdir, LOCK_NAME);
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
    let holder = 'another run';
    try {
      holder = readFileSync(holderFile, 'utf8').trim() || holder;
    } catch {
      // the holder had not written its name yet
    }
    const { pid, host } = error.data.owner;
    throw new WorktreeBusyError(run, holder, pid, host, repo.root);
  }
  // A resume after a kill finds its own name there, written by the killed process moments before:
  // rewritten, ext4 flushes the file's unwritten bytes as it truncates it (tens of ms, seen in a
  // resume's profile), so it is left as it is.
  if (readHolder(holderFile) !== `${run}\n`) writeFileSync(holderFile, `${run}\n`);
  return lock;
}

// The run named in the holder file, as written; undefined when there is none.
function readHolder(holderFile: string): string | undefined {
  try {
    return readFileSync(holderFile, 'utf8');
  } catch {
    return undefined;
  }
}
