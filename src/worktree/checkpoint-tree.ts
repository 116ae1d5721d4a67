// Reading a checkpoint to restore, as untrusted input: every tree of it is parsed entry by entry
// (duplicates kept, names as bytes) and checked against git's path rules before the caller writes
// anything, so a tree someone forged (a `.git/hooks/...` file, a `..` directory, a file beneath a
// symbolic link) is refused as a whole.
//
// What `git fsck --strict` (and so a host that checks pushes: receive.fsckObjects, as GitHub does)
// rejects in a tree, for the files a checkpoint is about to record: a `.gitmodules` that is a
// symbolic link, or whose submodules have a url or path that reads as an option, a url git
// disallows, an `update = !command` or a name with `..`; a `.gitattributes` with a line git cannot
// parse; and, to be safe, the other files git reads from a tree as symbolic links. Each is known
// by what it is to git (path-rules' gitReadFile: `.GITMODULES`, `GITMOD~1`, `.gitmodules.` and
// HFS+'s ignorable code points count). One such tree recorded and the journal could never be
// pushed again, even after the file is gone. A `.gitmodules` is read with git's own config parser.
import { runSync } from '../os/processes.js';
import { ObjectTooLargeError, UnsafeCheckpointError } from '../errors/index.js';
import { formatBytes } from '../format/numbers.js';
import type { ObjectStore } from '../git/object-store.js';
import { beneathNonDirectory, gitReadFile, DIR_MODE, LINK_MODE, modeViolation, nameViolation, parseRawTree } from '../git/path-rules.js';
import { pathByteLength, pathFromBytes } from '../os/path-bytes.js';
import { DEFAULT_MAX_FILE_BYTES, type FileEntry } from './entries.js';

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
      if (entry.name.length > MAX_NAME_BYTES || pathByteLength(path) > MAX_PATH_BYTES) throw refuse(path, 'too-long', 'is longer than a file name or path may be');
      if (++count > MAX_CHECKPOINT_ENTRIES) throw refuse(path, 'too-many', `would make the checkpoint hold more than ${MAX_CHECKPOINT_ENTRIES} entries`);
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
export async function readCheckpointBlob(objects: ObjectStore, tree: string, path: string, entry: FileEntry, indexBlob?: string): Promise<Buffer> {
  const fromIndex = indexBlob === entry.oid;
  const max = entry.mode === LINK_MODE ? MAX_LINK_BYTES : fromIndex ? undefined : DEFAULT_MAX_FILE_BYTES;
  let content: Buffer;
  try {
    content = await objects.read(entry.oid, 'blob', max);
  } catch (error) {
    if (error instanceof ObjectTooLargeError) {
      const { size } = error.data;
      const what = entry.mode === LINK_MODE ? `a symbolic link whose target is ${size} bytes, longer than a link can be` : `${formatBytes(size)} (${size} bytes), more than the ${formatBytes(max!)} a checkpoint records of a file`;
      throw new UnsafeCheckpointError(tree, path, 'too-large', `is ${what}, so it was not read`);
    }
    throw new UnsafeCheckpointError(tree, path, 'object', `names ${entry.oid}, which is not a readable blob here (${(error as Error).message})`);
  }
  if (entry.mode === LINK_MODE && (content.length === 0 || content.includes(0))) {
    throw new UnsafeCheckpointError(tree, path, 'symlink-target', 'is a symbolic link with an empty target or a NUL byte in it');
  }
  const unpushable = fromIndex || entry.mode === LINK_MODE ? undefined : fsckRefusal(path, { content });
  if (unpushable) throw new UnsafeCheckpointError(tree, path, 'fsck', `is ${unpushable}; a checkpoint never records one`);
  return content;
}

const REFUSED = 'which git fsck rejects (a host that checks pushes would refuse the journal)';
// attr.c's ATTR_MAX_LINE_LENGTH: fsck refuses a .gitattributes with a line this long or longer.
const ATTR_MAX_LINE_LENGTH = 2048;

/**
 * Why fsck would reject `path` recorded as a symbolic link (`symlink`) or a file holding
 * `content`, or undefined when it would not.
 */
export function fsckRefusal(path: string, entry: { symlink: true } | { content: Buffer }): string | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const name = gitReadFile(base);
  if (!name) return undefined;
  const spelled = base === name ? '' : ` (spelled ${JSON.stringify(base)})`;
  if ('symlink' in entry) return `a symbolic link named ${name}${spelled}, ${REFUSED}`;
  if (name === '.gitattributes') return longAttributeLine(entry.content) ? `a .gitattributes${spelled} with a line of ${ATTR_MAX_LINE_LENGTH} bytes or more, ${REFUSED}` : undefined;
  if (name !== '.gitmodules') return undefined;
  const values = configValues(entry.content);
  const what = `a .gitmodules${spelled}`;
  if (!values) return `${what} that git's config parser cannot read, which git fsck may reject in part (a host that checks pushes could refuse the journal)`;
  for (const [key, value] of values) {
    const match = /^submodule\.(.*)\.([^.]+)$/s.exec(key);
    if (!match) continue;
    const [, submodule, setting] = match as unknown as [string, string, string];
    if (submodule.split(/[/\\]/).includes('..')) return `${what} with a submodule name holding "..", ${REFUSED}`;
    if (setting === 'url' && badUrl(value)) return `${what} whose url reads as an option or is one git disallows, ${REFUSED}`;
    if (setting === 'path' && value.startsWith('-')) return `${what} whose path reads as an option, ${REFUSED}`;
    if (setting === 'update' && value.startsWith('!')) return `${what} whose update runs a command (!...), ${REFUSED}`;
  }
  return undefined;
}

// fsck.c's check_submodule_url, as far as it can be told from the text: an option (`-u./payload`),
// or a newline once %-escapes are decoded (git would hand it to a credential helper or a shell).
function badUrl(url: string): boolean {
  if (url.startsWith('-')) return true;
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // not valid %-escapes: git decodes byte by byte; a raw newline is looked for below as well
  }
  return /[\n\r]/.test(decoded) || /%0[ad]/i.test(url);
}

// fsck.c: every line shorter than ATTR_MAX_LINE_LENGTH bytes, up to the first NUL.
function longAttributeLine(content: Buffer): boolean {
  const end = content.indexOf(0);
  const text = end < 0 ? content : content.subarray(0, end);
  let start = 0;
  while (start <= text.length) {
    let eol = text.indexOf(10, start);
    if (eol < 0) eol = text.length;
    if (eol - start >= ATTR_MAX_LINE_LENGTH) return true;
    start = eol + 1;
  }
  return false;
}

// The key/value pairs of a config file as git itself parses them (`git config --file - --list`,
// which follows no includes), or undefined when git cannot parse it.
function configValues(content: Buffer): Array<[string, string]> | undefined {
  const result = runSync('git', ['config', '--file', '-', '--null', '--list'], { input: content, cwd: '/', stdio: ['pipe', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0 || !result.stdout) return undefined;
  return result.stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((item) => {
      const newline = item.indexOf('\n');
      return newline < 0 ? [item, ''] : [item.slice(0, newline), item.slice(newline + 1)];
    });
}
