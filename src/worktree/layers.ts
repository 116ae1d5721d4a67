// The files of a checkpoint as three layers: git's index, the tracked paths where the working tree
// differs from it (few), and the untracked files (possibly tens of thousands, as parallel arrays
// that the file hasher hands over whole). A checkpoint after an edit looks only at what moved:
// comparing two checkpoints on the same index costs the tracked changes plus the untracked files
// hashed again, not one map entry per untracked file.
import type { HashedList } from './file-hasher.js';
import type { FileEntry, SkippedFile } from './entries.js';

/** The untracked files of a checkpoint: their paths, and each one's entry as hashAll gave it. */
export interface UntrackedFiles extends HashedList {
  paths: readonly string[];
}

/** The files of one checkpoint, as layers laid over git's index. */
export interface Layers {
  index: ReadonlyMap<string, FileEntry>;
  /** Tracked paths whose working-tree file differs from the index: its entry, or undefined (none). */
  changes: ReadonlyMap<string, FileEntry | undefined>;
  untracked: UntrackedFiles;
}

/** The entry an untracked file has in the checkpoint: none when it is too big (a SkippedFile) or gone. */
export function untrackedEntry(hashed: FileEntry | SkippedFile | undefined): FileEntry | undefined {
  return hashed === undefined || 'reason' in hashed ? undefined : hashed;
}

/** Every file of a checkpoint: path -> mode and blob. */
export function layerFiles(layers: Layers): Map<string, FileEntry> {
  const files = treeFiles(layers.index, layers.changes);
  const { paths, entries } = layers.untracked;
  for (let i = 0; i < paths.length; i++) {
    const entry = untrackedEntry(entries[i]);
    if (entry) files.set(paths[i]!, entry);
  }
  return files;
}

/** The files of a checkpoint: the index, with the working tree's changes laid over it. */
export function treeFiles(
  index: ReadonlyMap<string, FileEntry>,
  changes: ReadonlyMap<string, FileEntry | undefined>,
): Map<string, FileEntry> {
  const files = new Map(index);
  for (const [path, entry] of changes) {
    if (entry) files.set(path, entry);
    else files.delete(path);
  }
  return files;
}

/**
 * Every path whose entry differs between two checkpoints on the same index, with its entry in
 * `now` (undefined: none). An untracked file of the same list is compared only if it was hashed again.
 */
export function changedSince(last: Layers, now: Layers): Map<string, FileEntry | undefined> {
  const moved = new Map<string, FileEntry | undefined>();
  const note = (path: string, entry: FileEntry | undefined, then: FileEntry | undefined) => {
    if (entry !== then && (entry?.oid !== then?.oid || entry?.mode !== then?.mode)) moved.set(path, entry);
  };
  for (const [path, entry] of now.changes) note(path, entry, last.changes.has(path) ? last.changes.get(path) : now.index.get(path));
  for (const [path, then] of last.changes) if (!now.changes.has(path)) note(path, now.index.get(path), then);
  const [before, after] = [last.untracked, now.untracked];
  if (before.paths === after.paths) {
    const look = (i: number) => note(after.paths[i]!, untrackedEntry(after.entries[i]), untrackedEntry(before.entries[i]));
    if (after.rehashed) for (const i of after.rehashed) look(i);
    else for (let i = 0; i < after.paths.length; i++) look(i);
    return moved;
  }
  // A new list: by path (untracked paths are not in the index, which is the same).
  const then = new Map<string, FileEntry | undefined>();
  for (let j = 0; j < before.paths.length; j++) then.set(before.paths[j]!, untrackedEntry(before.entries[j]));
  for (let i = 0; i < after.paths.length; i++) {
    const path = after.paths[i]!;
    note(path, untrackedEntry(after.entries[i]), then.get(path));
    then.delete(path);
  }
  for (const [path, entry] of then) note(path, undefined, entry);
  return moved;
}

/** The untracked files left out (too big), reusing `last`'s list when none of them was hashed again. */
export function skippedUntracked(now: UntrackedFiles, last?: { untracked: UntrackedFiles; skipped: SkippedFile[] }): SkippedFile[] {
  const isSkipped = (hashed: FileEntry | SkippedFile | undefined) => hashed !== undefined && 'reason' in hashed;
  if (
    last &&
    last.untracked.paths === now.paths &&
    now.rehashed &&
    !now.rehashed.some((i) => isSkipped(now.entries[i]) || isSkipped(last.untracked.entries[i]))
  )
    return last.skipped;
  const skipped: SkippedFile[] = [];
  for (const hashed of now.entries) if (isSkipped(hashed)) skipped.push(hashed as SkippedFile);
  return skipped;
}
