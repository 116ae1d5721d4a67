// Keeping what savepoint wrote, but has not committed yet, out of reach of `git gc --prune=now`.
// The working tree at the start of a run is snapshotted before the first model call and committed
// only with the first step after it; the snapshot a resume takes to measure drift may never be
// committed at all, yet the next checkpoint reuses its objects. Across such a window (a model call
// can take minutes) the tree is kept reachable through a ref of savepoint's own,
// `refs/savepoint/pending/<run>` (a ref may name a tree: gc keeps it, fsck accepts it, clones and
// pushes of branches never carry it), moved with the same compare-and-swap as the journal branch.
// It is dropped again once a journal commit that carries a checkpoint of the run has landed.
import { rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { unlinkQuietly } from '../os/durable-file.js';
import { runProcess } from '../os/processes.js';
import { compareAndSwapRef, readPackedRefs, readRef } from '../git/refs.js';

/** The ref that keeps `run`'s uncommitted working-tree snapshot reachable. */
export function pendingRef(run: string): string {
  return `refs/savepoint/pending/${run.endsWith('.') ? `${run}_` : run}`;
}

/** Points `run`'s pending ref at `tree` (durably), so a gc cannot prune it before it is committed. */
export async function holdPendingTree(commonDir: string, run: string, tree: string): Promise<void> {
  const ref = pendingRef(run);
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = readRef(commonDir, ref);
    if (current === tree) return;
    if (await compareAndSwapRef(commonDir, ref, current, tree)) return;
  }
}

/**
 * Drops `run`'s pending ref, once the journal holds a checkpoint of the run (or the run is done).
 * A ref that `git gc` moved into packed-refs is deleted by git itself, which rewrites that file
 * under its own lock (rare: only after a gc in the window, so the cost of a git process is fine).
 */
export async function releasePendingTree(commonDir: string, run: string): Promise<void> {
  const ref = pendingRef(run);
  if (readRef(commonDir, ref) === undefined) return;
  unlinkQuietly(join(commonDir, ref));
  // As git does when it deletes a ref: the directories it leaves empty go too (a later pending ref
  // makes them again).
  for (const dir of ['refs/savepoint/pending', 'refs/savepoint']) {
    try {
      rmdirSync(join(commonDir, dir));
    } catch {
      break; // not empty (another run's pending ref), or already gone
    }
  }
  if (readPackedRefs(commonDir).has(ref)) {
    await runProcess('git', [`--git-dir=${commonDir}`, 'update-ref', '-d', ref]);
  }
}
