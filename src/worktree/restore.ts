// Putting the working tree back to a checkpoint: after a crash that left files half-changed, on a
// fresh clone on another machine, or at a fork point. Only files that differ are written. A file
// the checkpoint does not have is deleted only when git tracks it (so git can bring it back);
// untracked files the run never recorded are kept, and the caller is told which.
//
// Over the person's work (`only`): only files the run itself wrote are written or removed, the
// others are left as they are, and every file about to be overwritten or removed is first given to
// `setAside` (set-aside.ts saves them under a ref), so nothing the person had is ever lost.
//
// A checkpoint may come from a fetched journal, so it is input, not trust: the whole tree is checked
// against git's path rules and every blob it needs is read before the first file is touched, the
// way is checked for files that would be lost, and nothing is ever written through a symbolic link.
// Names in the trees have their secrets redacted (redact/names.ts): a file is written under its real
// name when this machine can tell it, and otherwise not written at all but named (`unrestorable`),
// and files that may be it are kept.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';
import { fsPath, pathFromBytes } from '../os/path-bytes.js';
import { RestoreConflictError } from '../errors/index.js';
import type { ObjectStore } from '../git/object-store.js';
import { beneathNonDirectory, GITLINK_MODE, LINK_MODE, pathViolation } from '../git/path-rules.js';
import { recordPath, revealedPlace, revealPathHow, type NameRecorder } from '../redact/names.js';
import { readCheckpoint, readCheckpointBlob } from './checkpoint-tree.js';
import type { PlannedChange } from './drift.js';
import type { FileEntry, Snapshot } from './entries.js';

/** What a restore did. */
export interface RestoreResult {
  written: string[];
  deleted: string[];
  /** Untracked files that are not in the checkpoint, left as they are. */
  kept: string[];
  /** Files that differ from the checkpoint but the run never wrote: the person's, left as they are (`only`). */
  left: string[];
  /** Written files that still hold a secret's placeholder, because this machine does not know its value. */
  unrevealed: string[];
  /**
   * Files of the checkpoint not written because their recorded name holds a secret this machine
   * cannot put back (or one that reveals to no usable name), as the checkpoint names them.
   */
  unrestorable: string[];
}

/** A checkpoint's files in their working-tree form: which paths git filters, and a blob smudged for its path (filters.ts). */
export interface Smudger {
  filtered(paths: Iterable<string>): Set<string>;
  smudge(path: string, oid: string): Buffer;
}

/** Puts secrets back into a checkpoint's (redacted) text: the text, and the placeholders it could not fill. */
export type RevealText = (text: string) => { text: string; unknown: string[] };

interface Write {
  path: string;
  entry: FileEntry;
  content: Buffer;
}

type Names = Map<string, string>;

/** What a restore may touch, and what it does before it touches anything. */
export interface RestoreLimits {
  /**
   * Whether the restore may write or remove this file (named as the checkpoint's trees name it):
   * only files the run itself wrote. Others that differ are left as they are and listed (`left`).
   * Without it, every file that differs is put back (a clean checkout of the run's base commit).
   */
  only?: (pathInTrees: string) => boolean;
  /** Given every file the restore will overwrite or remove, after every check and before the first write: saves them (set-aside.ts). */
  setAside?: (paths: string[]) => void | Promise<void>;
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
  recordName?: NameRecorder,
  smudger?: Smudger,
  limits: RestoreLimits = {},
): Promise<RestoreResult> {
  const result: RestoreResult = { written: [], deleted: [], kept: [], left: [], unrevealed: [], unrestorable: [] };
  // The checkpoint's trees hold names with secrets redacted (redact/names.ts): each file is
  // restored under its real name, where this machine can tell it.
  const recorded = await readCheckpoint(objects, target);
  const { wanted, recordedAs } = realNames(recorded, current, result.unrestorable, reveal, recordName);
  // The journal's trees (the guard's, `only`'s) name each path as it is recorded there.
  const inTrees = (path: string) => recordedAs.get(path) ?? (recordName ? recordPath(path, recordName) : path);
  const mayTouch = (path: string) => !limits.only || limits.only(inTrees(path));
  const writes: Write[] = [];
  for (const [path, entry] of wanted) {
    if (entry.mode === GITLINK_MODE) continue; // a submodule: its own repository
    const have = current.files.get(path);
    if (have && have.oid === entry.oid && have.mode === entry.mode) continue;
    if (!mayTouch(path)) {
      result.left.push(path); // the person's file: never written over, never brought back
      continue;
    }
    const indexBlob = tracked instanceof Map ? tracked.get(path) : undefined;
    writes.push({ path, entry, content: await readCheckpointBlob(objects, target, recordedAs.get(path) ?? path, entry, indexBlob) });
  }
  // A checkpoint holds a filtered file in its clean form (an LFS pointer): written as `git checkout`
  // writes it, smudged by git for its path. Links are never filtered.
  const filtered = smudger
    ? smudger.filtered(writes.filter((write) => write.entry.mode !== LINK_MODE).map((write) => write.path))
    : new Set<string>();
  for (const write of writes) if (filtered.has(write.path)) write.content = smudger!.smudge(write.path, write.entry.oid);
  // Text files and link targets get their secrets back where this machine knows them (checkpoints hold placeholders).
  for (const write of reveal ? writes : []) {
    const { content } = write;
    if (content.subarray(0, 8000).includes(0) || !content.includes('[REDACTED:')) continue;
    const revealed = reveal!(content.toString('utf8'));
    write.content = Buffer.from(revealed.text);
    if (revealed.unknown.length) result.unrevealed.push(write.path);
  }
  // A checkpoint from before submodules were recorded as trees has their gitlinks: their files stay.
  const gitlinks = [...wanted].filter(([, entry]) => entry.mode === '160000').map(([path]) => `${path}/`);
  // A file that may be one the restore could not name is kept, never deleted.
  const unnamed = result.unrestorable.map((path) => revealedPlace(path, reveal));
  const mayBeUnnamed = (path: string) =>
    unnamed.some(({ dir, file }) => (file ? parentOf(path) === dir : dir === '' || path.startsWith(`${dir}/`)));
  for (const path of current.files.keys()) {
    if (wanted.has(path) || gitlinks.some((prefix) => path.startsWith(prefix))) continue;
    // With `only`, a file the run wrote (and later removed) goes, untracked or not: it is set aside first.
    if (mayBeUnnamed(path)) result.kept.push(path);
    else if (limits.only) (limits.only(inTrees(path)) ? result.deleted : tracked.has(path) ? result.left : result.kept).push(path);
    else (tracked.has(path) ? result.deleted : result.kept).push(path);
  }
  if (guard) {
    // The guard reads the journal's trees: it is told the paths as they are recorded there.
    const changes = new Map<string, PlannedChange>();
    for (const { path, entry } of writes) changes.set(inTrees(path), { now: current.files.get(path), target: entry });
    for (const path of result.deleted) changes.set(inTrees(path), { now: current.files.get(path) });
    await guard(changes);
  }
  const deletable = new Set(result.deleted);
  for (const write of writes) checkWay(root, write.path, deletable);
  for (const path of result.deleted) assertNoLinkOnTheWay(root, path);
  // Every file about to be overwritten or removed is saved first (a directory in the way holds
  // only files of `deleted`, checkWay made sure): the person can get each one back.
  const replaced = writes
    .filter((write) => {
      const stat = lstatOrUndefined(onDisk(root, write.path));
      return stat !== undefined && !stat.isDirectory();
    })
    .map((write) => write.path);
  const doomed = [...new Set([...replaced, ...result.deleted.filter((path) => lstatOrUndefined(onDisk(root, path)) !== undefined)])];
  if (doomed.length && limits.setAside) await limits.setAside(doomed);
  for (const path of result.deleted) rmSync(onDisk(root, path), { force: true });
  for (const write of writes) {
    writeEntry(root, write);
    result.written.push(write.path);
  }
  return result;
}

// The checkpoint's files by their real paths (and, for the renamed ones, the path each is recorded
// under). A recorded name is put back from the working tree (a file here records to it), else
// revealed (the book's tag, the placeholders' values); one that cannot be, that reveals to a path
// git's rules refuse, or whose guessed path another file also claims, is not restored and is named.
// A name revealed here is adopted by this machine's recorder (its tag then stays the file's).
function realNames(
  recorded: Map<string, FileEntry>,
  current: Snapshot,
  unrestorable: string[],
  reveal?: RevealText,
  recordName?: NameRecorder,
): { wanted: Map<string, FileEntry>; recordedAs: Names } {
  const here: Names = new Map();
  if (recordName) {
    for (const path of current.files.keys()) {
      const inTrees = recordPath(path, recordName);
      if (inTrees !== path) here.set(inTrees, path);
    }
  }
  const wanted = new Map<string, FileEntry>();
  const recordedAs: Names = new Map();
  // Each file's real path, and whether it is sure: recorded as it is, found here, or revealed by
  // its tag. A guess (revealed from its placeholders alone) that another file also claims is not
  // written: the two cannot be told apart (a token's name and a file literally named after it).
  const claims = new Map<string, Array<{ path: string; entry: FileEntry; exact: boolean }>>();
  for (const [path, entry] of recorded) {
    const found = here.get(path);
    const real = found !== undefined ? { path: found, exact: true } : revealPathHow(path, reveal);
    if (real === undefined || (real.path !== path && (pathViolation(real.path, entry.mode) || real.path.includes('\0')))) {
      unrestorable.push(path);
      continue;
    }
    const list = claims.get(real.path) ?? [];
    list.push({ path, entry, exact: real.exact });
    claims.set(real.path, list);
  }
  for (const [real, list] of claims) {
    const sure = list.filter((claim) => claim.exact);
    const chosen = sure.length === 1 ? sure[0]! : list.length === 1 ? list[0]! : undefined;
    for (const claim of list) if (claim !== chosen) unrestorable.push(claim.path);
    if (!chosen) continue;
    wanted.set(real, chosen.entry);
    if (real === chosen.path) continue;
    recordedAs.set(real, chosen.path);
    if (here.has(chosen.path) || !recordName?.adopt) continue;
    const [names, reals] = [chosen.path.split('/'), real.split('/')];
    names.forEach((name, i) => name !== reals[i] && recordName.adopt!(name, reals[i]!));
  }
  const beneath = recordedAs.size ? beneathNonDirectory(new Map([...wanted].map(([path, entry]) => [path, entry.mode]))) : undefined;
  if (beneath) {
    // Only a revealed name can have made this (the recorded tree was checked): leave that file out.
    wanted.delete(beneath.path);
    unrestorable.push(recordedAs.get(beneath.path) ?? beneath.path);
  }
  return { wanted, recordedAs };
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

// `path` of the working tree at `root` as the file system takes it: the name's bytes (os/path-bytes.ts).
function onDisk(root: string, path: string): string | Buffer {
  return fsPath(join(root, path));
}

// Nothing there: no such name, or a file where the path needs a directory ('thing' a file, asked for 'thing/inside.txt').
function lstatOrUndefined(path: string | Buffer): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
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
    const stat = lstatOrUndefined(onDisk(root, dir));
    if (!stat) return;
    if (stat.isDirectory()) continue;
    if (!deletable.has(dir)) throw new RestoreConflictError(path, dir);
    return;
  }
  const stat = lstatOrUndefined(onDisk(root, path));
  if (!stat?.isDirectory()) return;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(onDisk(root, dir), { withFileTypes: true, encoding: 'buffer' })) {
      const rel = `${dir}/${pathFromBytes(entry.name)}`;
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
    const stat = lstatOrUndefined(onDisk(root, dir));
    if (stat && !stat.isDirectory()) throw new RestoreConflictError(path, dir);
  }
}

// Creates the directories on the way (never following a link), clears the place and writes the
// file or link with an exclusive create, so that nothing is written through a link that appeared.
function writeEntry(root: string, { path, entry, content }: Write): void {
  for (const dir of leadingDirs(path)) {
    const full = onDisk(root, dir);
    const stat = lstatOrUndefined(full);
    if (!stat) mkdirSync(full);
    else if (!stat.isDirectory()) {
      if (stat.isSymbolicLink()) throw new RestoreConflictError(path, dir);
      unlinkSync(full); // a tracked file the checkpoint replaces by a directory (checked by checkWay)
      mkdirSync(full);
    }
  }
  const full = onDisk(root, path);
  const stat = lstatOrUndefined(full);
  if (stat?.isDirectory()) removeEmptyDirs(full);
  else if (stat) unlinkSync(full);
  if (entry.mode === LINK_MODE)
    symlinkSync(content, full); // the target's bytes, as recorded
  else {
    writeFileSync(full, content, { flag: 'wx' });
    chmodSync(full, entry.mode === '100755' ? 0o755 : 0o644);
  }
}

// Removes a directory that holds only (empty) directories, once its tracked files are deleted.
function removeEmptyDirs(dir: string | Buffer): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' }))
    if (entry.isDirectory()) removeEmptyDirs(Buffer.concat([Buffer.from(dir), Buffer.from('/'), entry.name]));
  rmdirSync(dir);
}
