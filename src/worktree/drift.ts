// Before a resumed run goes live: is the working tree still what the journal last recorded? Replayed
// steps assume the files as the run left them, so a difference must be resolved first: restored
// silently on a clean checkout of the run's base commit (a fresh clone), otherwise shown to a person.
import type { ObjectStore } from '../git/object-store.js';
import type { Snapshot } from './entries.js';
import type { WorktreeSnapshotter } from './snapshot.js';
import { diffTrees, type FileChange } from '../git/tree-diff.js';

/** How the working tree differs from the run's last checkpoint. */
export interface Drift {
  /** The checkpoint the journal holds, and the step that recorded it (0: when the run started). */
  checkpoint: string;
  step: number;
  current: Snapshot;
  changes: FileChange[];
  /** The working tree is exactly the run's base commit: a fresh clone or checkout. */
  cleanBase: boolean;
}

/** The difference between the working tree and `checkpoint`, or undefined when there is none. */
export async function findDrift(objects: ObjectStore, snapshotter: WorktreeSnapshotter, checkpoint: string, step: number, baseCommit?: string): Promise<Drift | undefined> {
  const current = snapshotter.snapshot();
  if (current.tree === checkpoint) return undefined;
  let baseTree: string | undefined;
  try {
    baseTree = baseCommit ? (await objects.readCommit(baseCommit)).tree : undefined;
  } catch {
    baseTree = undefined; // the base commit is not in this clone
  }
  const changes = await diffTrees(objects, checkpoint, current.tree);
  return { checkpoint, step, current, changes, cleanBase: current.tree === baseTree };
}


