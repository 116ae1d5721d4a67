// Reading a checkpoint to restore, as untrusted input: every tree of it is parsed entry by entry
// (duplicates kept, names as bytes) and checked against git's path rules before the caller writes
// anything, so a tree someone forged (a `.git/hooks/...` file, a `..` directory, a file beneath a
// symbolic link) is refused as a whole.
// Tested in test/worktree/restore.test.ts.
import { ObjectTooLargeError, UnsafeCheckpointError } from '../errors/index.js';
import { formatBytes } from '../format/numbers.js';
import type { ObjectStore } from '../git/object-store.js';
import { beneathNonDirectory, DIR_MODE, LINK_MODE, modeViolation, nameViolation, parseRawTree } from '../git/path-rules.js';
import { pathByteLength, pathFromBytes } from '../os/path-bytes.js';
import { DEFAULT_MAX_FILE_BYTES, type FileEntry } from './entries.js';
import { fsckRefusal } from './fsck-rules.js';

/** More entries than this in one checkpoint are refused (a tree can repeat a subtree to look enormous). */
export const MAX_CHECKPOINT_ENTRIES = 1_000_000;
// Longer paths and names than Linux accepts would fail half-way through a restore.
const MAX_PATH_BYTES = 4095;
const MAX_NAME_BYTES = 255;
// The longest symbolic-link target Linux accepts (PATH_MAX less its NUL): a checkpoint records what readlink gave.
const MAX_LINK_BYTES = 4095;

/** Every file of checkpoint tree `tree` (path -> mode and blob), once all of it is checked; else UnsafeCheckpointError. */
export async function readCheckpoint(objects: ObjectStore, tree: string): Promise<Map<string, FileEntry>> {
  const refuse = (path: string, rule: string, reason: string) => new UnsafeCheckpointError(tree, path, rule, reason);
  const files = new Map<string, FileEntry>();
  const pending: Array<{ oid: string; prefix: string }> = [{ oid: tree, prefix: '' }];
  let count = 0;
  while (pending.length) {
    const { oid, prefix } = pending.pop()!;
    const here = prefix ? prefix.slice(0, -1) : '(the root)';
    let body: Buffer;
    try {
      body = await objects.read(oid, 'tree');
    } catch (error) {
      throw refuse(here, 'object', `is not a readable tree object ${oid} (${(error as Error).message})`);
    }
    let entries;
    try {
      entries = parseRawTree(body);
    } catch (error) {
      throw refuse(here, 'object', `is a tree object that cannot be parsed (${(error as Error).message})`);
    }
    const seen = new Set<string>();
    for (const entry of entries) {
      const path = `${prefix}${pathFromBytes(entry.name)}`; // the name's bytes, kept (os/path-bytes.ts)
      const violation = nameViolation(entry.name, entry.mode) ?? modeViolation(entry.mode);
      if (violation) throw refuse(path, violation.rule, violation.reason);
      if (seen.has(path)) throw refuse(path, 'duplicate', 'appears twice in the same directory');
      seen.add(path);
      if (entry.name.length > MAX_NAME_BYTES || pathByteLength(path) > MAX_PATH_BYTES)
        throw refuse(path, 'too-long', 'is longer than a file name or path may be');
      if (++count > MAX_CHECKPOINT_ENTRIES)
        throw refuse(path, 'too-many', `would make the checkpoint hold more than ${MAX_CHECKPOINT_ENTRIES} entries`);
      if (entry.mode === DIR_MODE) pending.push({ oid: entry.oid, prefix: `${path}/` });
      else files.set(path, { mode: entry.mode, oid: entry.oid });
    }
  }
  const beneath = beneathNonDirectory(new Map([...files].map(([path, entry]) => [path, entry.mode])));
  if (beneath) throw refuse(beneath.path, beneath.violation.rule, beneath.violation.reason);
  return files;
}

/**
 * The content of one file of the checkpoint, checked to be a blob (and, for a link, a usable
 * target) that a checkpoint could have recorded: its size is read from the object's header first,
 * and a file over the cap checkpoints write with (DEFAULT_MAX_FILE_BYTES; a link over PATH_MAX) is
 * refused before any of it is read, unless it is the very blob git's index has at that path
 * (`indexBlob`: tracked files are recorded as git has them, whatever their size). A `.gitmodules`
 * that git fsck rejects is refused too: a checkpoint never records one.
 */
export async function readCheckpointBlob(
  objects: ObjectStore,
  tree: string,
  path: string,
  entry: FileEntry,
  indexBlob?: string,
): Promise<Buffer> {
  const fromIndex = indexBlob === entry.oid;
  const max = entry.mode === LINK_MODE ? MAX_LINK_BYTES : fromIndex ? undefined : DEFAULT_MAX_FILE_BYTES;
  let content: Buffer;
  try {
    content = await objects.read(entry.oid, 'blob', max);
  } catch (error) {
    if (error instanceof ObjectTooLargeError) {
      const { size } = error.data;
      const what =
        entry.mode === LINK_MODE
          ? `a symbolic link whose target is ${size} bytes, longer than a link can be`
          : `${formatBytes(size)} (${size} bytes), more than the ${formatBytes(max!)} a checkpoint records of a file`;
      throw new UnsafeCheckpointError(tree, path, 'too-large', `is ${what}, so it was not read`);
    }
    throw new UnsafeCheckpointError(
      tree,
      path,
      'object',
      `names ${entry.oid}, which is not a readable blob here (${(error as Error).message})`,
    );
  }
  if (entry.mode === LINK_MODE && (content.length === 0 || content.includes(0))) {
    throw new UnsafeCheckpointError(tree, path, 'symlink-target', 'is a symbolic link with an empty target or a NUL byte in it');
  }
  const unpushable = fromIndex || entry.mode === LINK_MODE ? undefined : fsckRefusal(path, { content });
  if (unpushable) throw new UnsafeCheckpointError(tree, path, 'fsck', `is ${unpushable}; a checkpoint never records one`);
  return content;
}
