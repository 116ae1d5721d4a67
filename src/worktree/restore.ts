// Putting the working tree back to a checkpoint: after a crash that left files half-changed, on a
// fresh clone on another machine, or at a fork point. Only files that differ are written. A file
// the checkpoint does not have is deleted only when git tracks it (so git can bring it back);
// untracked files the run never recorded are kept, and the caller is told which.
//
// A checkpoint may come from a fetched journal, so it is input, not trust: the whole tree is checked
// against git's path rules and every blob it needs is read before the first file is touched, the
// way is checked for files that would be lost, and nothing is ever written through a symbolic link.
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { RestoreConflictError } from '../errors/index.js';
import type { ObjectStore } from '../git/object-store.js';
import { GITLINK_MODE, LINK_MODE } from '../git/path-rules.js';
import { readCheckpoint, readCheckpointBlob } from './checkpoint-tree.js';
import type { PlannedChange } from './finished-edits.js';
import type { FileEntry, Snapshot } from './snapshot.js';

/** What a restore did. */
export interface RestoreResult {
  written: string[];
  deleted: string[];
  /** Untracked files that are not in the checkpoint, left as they are. */
  kept: string[];
  /** Written files that still hold a secret's placeholder, because this machine does not know its value. */
  unrevealed: string[];
}

/** Puts secrets back into a checkpoint's (redacted) text: the text, and the placeholders it could not fill. */
export type RevealText = (text: string) => { text: string; unknown: string[] };

interface Write {
  path: string;
  entry: FileEntry;
  content: Buffer;
}

/**
 * Makes the working tree at `root` match the checkpoint tree `target`, given its current snapshot
 * and the paths git tracks (with the blob its index has for each, when known: a file of that very
 * blob may be larger than checkpoints record others). Throws UnsafeCheckpointError (a tree git would refuse) or
 * RestoreConflictError (an untracked file in the way) before writing anything, and whatever `guard`
 * throws when it is shown the files the restore would change.
 */
export async function restoreWorktree(
  root: string,
  objects: ObjectStore,
  target: string,
  current: Snapshot,
  tracked: ReadonlySet<string> | ReadonlyMap<string, string>,
  guard?: (changes: ReadonlyMap<string, PlannedChange>) => Promise<void>,
  reveal?: RevealText,
): Promise<RestoreResult> {
  const wanted = await readCheckpoint(objects, target);
  const writes: Write[] = [];
  for (const [path, entry] of wanted) {
    if (entry.mode === GITLINK_MODE) continue; // a submodule: its own repository
    const have = current.files.get(path);
    if (have && have.oid === entry.oid && have.mode === entry.mode) continue;
    const indexBlob = tracked instanceof Map ? tracked.get(path) : undefined;
    writes.push({ path, entry, content: await readCheckpointBlob(objects, target, path, entry, indexBlob) });
  }
  const result: RestoreResult = { written: [], deleted: [], kept: [], unrevealed: [] };
  // Text files get their secrets back where this machine knows them (checkpoints hold placeholders).
  for (const write of reveal ? writes : []) {
    const { content } = write;
    if (write.entry.mode === '120000' || content.subarray(0, 8000).includes(0) || !content.includes('[REDACTED:')) continue;
    const revealed = reveal!(content.toString('utf8'));
    write.content = Buffer.from(revealed.text);
    if (revealed.unknown.length) result.unrevealed.push(write.path);
  }
  // A checkpoint from before submodules were recorded as trees has their gitlinks: their files stay.
  const gitlinks = [...wanted].filter(([, entry]) => entry.mode === '160000').map(([path]) => `${path}/`);
  for (const path of current.files.keys()) {
    if (wanted.has(path) || gitlinks.some((prefix) => path.startsWith(prefix))) continue;
    (tracked.has(path) ? result.deleted : result.kept).push(path);
  }
  if (guard) {
    const changes = new Map<string, PlannedChange>();
    for (const { path, entry } of writes) changes.set(path, { now: current.files.get(path), target: entry });
    for (const path of result.deleted) changes.set(path, { now: current.files.get(path) });
    await guard(changes);
  }
  const deletable = new Set(result.deleted);
  for (const write of writes) checkWay(root, write.path, deletable);
  for (const path of result.deleted) assertNoLinkOnTheWay(root, path);
  for (const path of result.deleted) rmSync(join(root, path), { force: true });
  for (const write of writes) {
    writeEntry(root, write);
    result.written.push(write.path);
  }
  return result;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

// Each leading directory of `path` prefix by prefix: 'a/b/c' gives 'a', 'a/b'.
function leadingDirs(path: string): string[] {
  const names = path.split('/');
  return names.slice(0, -1).map((_, i) => names.slice(0, i + 1).join('/'));
}

// Writing `path` must not lose a file nobody can bring back: every leading directory is a directory,
// missing, or a tracked file the restore deletes anyway; a directory at `path` itself holds only such files.
function checkWay(root: string, path: string, deletable: ReadonlySet<string>): void {
  for (const dir of leadingDirs(path)) {
    const stat = lstatOrUndefined(join(root, dir));
    if (!stat) return;
    if (stat.isDirectory()) continue;
    if (!deletable.has(dir)) throw new RestoreConflictError(path, dir);
    return;
  }
  const stat = lstatOrUndefined(join(root, path));
  if (!stat?.isDirectory()) return;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (!deletable.has(rel)) throw new RestoreConflictError(path, rel);
    }
  };
  walk(path);
}

// A tracked path is removed only when no directory on its way is a symbolic link (git's
// has_symlink_leading_path): unlinking through one would remove a file outside the working tree.
function assertNoLinkOnTheWay(root: string, path: string): void {
  for (const dir of leadingDirs(path)) {
    const stat = lstatOrUndefined(join(root, dir));
    if (stat && !stat.isDirectory()) throw new RestoreConflictError(path, dir);
  }
}

// Creates the directories on the way (never following a link), clears the place and writes the
// file or link with an exclusive create, so that nothing is written through a link that appeared.
function writeEntry(root: string, { path, entry, content }: Write): void {
  for (const dir of leadingDirs(path)) {
    const full = join(root, dir);
    const stat = lstatOrUndefined(full);
    if (!stat) mkdirSync(full);
    else if (!stat.isDirectory()) {
      if (stat.isSymbolicLink()) throw new RestoreConflictError(path, dir);
      unlinkSync(full); // a tracked file the checkpoint replaces by a directory (checked by checkWay)
      mkdirSync(full);
    }
  }
  const full = join(root, path);
  const stat = lstatOrUndefined(full);
  if (stat?.isDirectory()) removeEmptyDirs(full);
  else if (stat) unlinkSync(full);
  if (entry.mode === LINK_MODE) symlinkSync(content.toString('utf8'), full);
  else {
    writeFileSync(full, content, { flag: 'wx' });
    chmodSync(full, entry.mode === '100755' ? 0o755 : 0o644);
  }
}

// Removes a directory that holds only (empty) directories, once its tracked files are deleted.
function removeEmptyDirs(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeEmptyDirs(join(dir, entry.name));
  rmdirSync(dir);
}
