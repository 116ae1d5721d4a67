// The checkpoint after a step that changed only some paths (an edit, a write: the tool knows the
// one file it wrote): the last checkpoint with those paths hashed again, and only the trees on
// their paths rebuilt, instead of a `git status` of the whole tree (a second a step on a
// 27,000-file repository). Anything else that changed meanwhile is the next full checkpoint's to
// see (after a command, or at a resume's drift check). WorktreeSnapshotter.snapshotPaths calls it.
// Tested in test/worktree/one-path-checkpoint.test.ts.
import { FILE_MODE } from '../git/git-object.js';
import { pathViolation } from '../git/path-rules.js';
import type { ObjectStore } from '../git/object-store.js';
import { ObjectBatch } from '../git/object-batch.js';
import { hasRawBytes } from '../os/path-bytes.js';
import type { NameRecorder } from '../redact/names.js';
import type { CheckpointOptions, FileEntry, SkippedFile, Snapshot } from './entries.js';
import type { FileHasher } from './file-hasher.js';
import type { IndexEntries } from './index-status.js';
import { layerFiles, type Layers } from './layers.js';
import { unlessUnreadable, updateTrees, type DirTrees } from './tree-build.js';

/** The last checkpoint's trees by directory, the index they were built on, its files' layers, and the untracked files it left out. */
export interface BuiltTrees {
  indexSignature: string;
  layers: Layers;
  skipped: SkippedFile[];
  dirs: DirTrees;
}

/** What a one-path checkpoint builds on, and the snapshotter's parts it uses. */
export interface PathCheckpointBase {
  /** The last checkpoint's trees (their `dirs` are updated in place once the new objects are stored). */
  last: BuiltTrees;
  /** The last checkpoint. */
  lastSnapshot: Snapshot;
  /** git's index as it is now. */
  index: IndexEntries;
  objects: ObjectStore;
  hasher: FileHasher;
  recordName: NameRecorder;
  /** Tells the hasher which of `paths` git filters (WorktreeSnapshotter.useFilters). */
  useFilters(paths: readonly string[]): void;
  /** Whether git ignores the untracked file at `path`. */
  ignored(path: string): boolean;
}

/**
 * The one-path checkpoint's outcome: the new trees and checkpoint; `unchanged` (the last checkpoint
 * holds); `full` when a full snapshot is needed instead (git's index changed, a path is in a
 * submodule or not recordable, a file is too big to record); `unreadable` when a tree read back is
 * not usable (the full pass must build them all).
 */
export type PathCheckpoint = { trees: BuiltTrees; snapshot: Snapshot } | 'unchanged' | 'full' | 'unreadable';

/** The checkpoint of `base` with only `paths` hashed again; see PathCheckpoint for when it is not one. */
export function checkpointPaths(base: PathCheckpointBase, paths: readonly string[], options: CheckpointOptions): PathCheckpoint {
  const { last, lastSnapshot, index } = base;
  if (index.signature !== last.indexSignature) return 'full';
  if (
    paths.some(
      (path) =>
        hasRawBytes(path) ||
        pathViolation(path, FILE_MODE) !== undefined ||
        index.gitlinks.some((link) => path === link || path.startsWith(`${link}/`)),
    )
  )
    return 'full';
  const batch = new ObjectBatch(base.objects, options);
  base.useFilters(paths);
  const changes = new Map(last.layers.changes);
  let untracked = last.layers.untracked;
  const moved = new Map<string, FileEntry | undefined>();
  for (const path of paths) {
    const hashed = base.hasher.hash(path, batch);
    if (hashed && 'reason' in hashed) return 'full'; // too big: the full pass says so, as it always does
    const at = index.entries.has(path) ? -1 : untracked.paths.indexOf(path);
    if (at >= 0) {
      // An untracked file the last checkpoint had: its entry in that list, the list itself kept.
      const entries = [...untracked.entries];
      entries[at] = hashed;
      untracked = { ...untracked, entries, rehashed: [...(untracked.rehashed ?? []), at] };
    } else if (index.entries.has(path) || !base.ignored(path)) {
      changes.set(path, hashed);
    } else continue; // an ignored file: no checkpoint holds it
    moved.set(path, hashed);
  }
  if (moved.size === 0) return 'unchanged';
  const updated = unlessUnreadable(() => updateTrees(last.dirs, moved, moved.keys(), batch, base.recordName));
  if (!updated) return 'unreadable';
  batch.flush();
  for (const [dir, entry] of updated.dirs) {
    if (entry) last.dirs.set(dir, entry);
    else last.dirs.delete(dir);
  }
  const layers: Layers = { index: index.entries, changes, untracked };
  let files: Map<string, FileEntry> | undefined;
  const snapshot: Snapshot = {
    tree: updated.root,
    skipped: lastSnapshot.skipped.filter((file) => !moved.has(file.path)),
    get files() {
      return (files ??= layerFiles(layers));
    },
  };
  return { trees: { ...last, layers }, snapshot };
}
