// Before a resumed run goes live: is the working tree still what the journal last recorded? Replayed
// steps assume the files as the run left them, so a difference must be resolved first: restored
// silently on a clean checkout of the run's base commit (a fresh clone), otherwise shown to a person.
//
// No finished run's edits are undone by another run's restore. Runs that take turns in one working
// tree each record the whole tree, so resuming an older run with --restore would put back its view
// of files a later run changed and finished. Before a restore writes anything, each file it would
// change is checked against the runs that finished after this run's last checkpoint: if the file is
// now exactly what such a run left there, and that run changed it, the restore is refused.
import type { ObjectStore } from '../git/object-store.js';
import type { FileEntry, Snapshot } from './entries.js';
import type { WorktreeSnapshotter } from './snapshot.js';
import { diffTrees, type FileChange } from '../git/tree-diff.js';
import { RestoreWouldUndoError } from '../errors/index.js';
import { TREE_MODE } from '../git/git-object.js';
import { listRunIds, readRunRecord } from '../journal/reader.js';
import type { JournalStore } from '../journal/store.js';

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
export async function findDrift(
  objects: ObjectStore,
  snapshotter: WorktreeSnapshotter,
  checkpoint: string,
  step: number,
  baseCommit?: string,
): Promise<Drift | undefined> {
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

/**
 * The files the run itself wrote (as its trees name them): every path that changed from one of its
 * checkpoints to the next, starting at `start` (the tree it began on). A checkpoint marked `person`
 * is the person's own files, kept (a user step): what changed into it is theirs, not the run's.
 */
export async function filesTheRunWrote(
  objects: ObjectStore,
  start: string | undefined,
  trail: ReadonlyArray<{ tree: string; person: boolean }>,
): Promise<Set<string>> {
  const wrote = new Set<string>();
  let before = start;
  for (const { tree, person } of trail) {
    if (!person && before !== undefined) for (const change of await diffTrees(objects, before, tree)) wrote.add(change.path);
    before = tree;
  }
  return wrote;
}

/** A file a restore would change: what it is now and what the checkpoint has (undefined: no file). */
export interface PlannedChange {
  now?: FileEntry;
  target?: FileEntry;
}

const same = (a: FileEntry | undefined, b: FileEntry | undefined) => a?.oid === b?.oid && a?.mode === b?.mode;

async function entryAt(objects: ObjectStore, tree: string | undefined, path: string): Promise<FileEntry | undefined> {
  let oid = tree;
  const names = path.split('/');
  for (let i = 0; oid && i < names.length; i++) {
    const entry = (await objects.readTree(oid)).get(names[i]!);
    if (!entry) return undefined;
    if (i === names.length - 1) return entry.mode === TREE_MODE ? undefined : entry;
    oid = entry.mode === TREE_MODE ? entry.oid : undefined;
  }
  return undefined;
}

/**
 * Throws RestoreWouldUndoError when restoring run `run`'s `checkpoint` (recorded at `since`) would
 * undo an edit of a run that finished after that: a file in `changes` that run changed, now as it left it.
 */
export async function refuseUndoingFinishedRuns(
  store: JournalStore,
  run: string,
  checkpoint: string,
  since: string,
  changes: ReadonlyMap<string, PlannedChange>,
): Promise<void> {
  if (changes.size === 0) return;
  for (const other of await listRunIds(store)) {
    if (other === run) continue;
    const record = await readRunRecord(store, other).catch(() => undefined);
    if (record?.status !== 'finished' || !(record.updatedAt > since)) continue;
    const final = (await store.treeAt(`runs/${other}`))?.get('worktree');
    if (final?.mode !== TREE_MODE) continue;
    const undone: string[] = [];
    for (const [path, { now, target }] of changes) {
      const left = await entryAt(store.objects, final.oid, path);
      if (!same(now, left) || same(target, left)) continue;
      if (same(left, await entryAt(store.objects, record.startCheckpoint, path))) continue; // not that run's edit
      undone.push(path);
    }
    if (undone.length) throw new RestoreWouldUndoError(run, other, checkpoint, undone);
  }
}
