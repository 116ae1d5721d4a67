// The git object format, pure code: hashing an object, serialising and parsing trees and commits,
// and the loose-object encoding (header + zlib). We do this ourselves (the formats are tiny) so that
// every object of an append is known, with its id, before any is written. The one file read here is
// a loose object's (its header, or the whole object): the format's other half.
// Tested in test/git/object-store.test.ts, test/git/pack-rollup.test.ts.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, inflateSync, constants as zlib } from 'node:zlib';
import { ObjectTooLargeError } from '../errors/index.js';
import { pathFromBytes, pathToBytes } from '../os/path-bytes.js';

/** The kinds of git object the journal writes and reads. */
export type ObjectType = 'blob' | 'tree' | 'commit';

/** One object ready to store: its id and its uncompressed body (without the git header). */
export interface GitObject {
  oid: string;
  type: ObjectType;
  body: Buffer;
}

/** A tree entry; `mode` is git's octal string: 100644 file, 100755 executable, 120000 link, 40000 tree. */
export interface TreeEntry {
  mode: string;
  oid: string;
}

/** A tree's entries by name. */
export type Tree = Map<string, TreeEntry>;

/** The mode of a subtree entry, as git writes it in a tree. */
export const TREE_MODE = '40000';

/** The mode of an ordinary (non-executable) file entry. */
export const FILE_MODE = '100644';

/**
 * The largest tree savepoint reads: a directory of some 600,000 entries, far past what a working
 * tree (or the journal's shards of 100 steps) holds; a fetched tree larger than this is refused.
 */
export const MAX_TREE_BYTES = 32 * 1024 * 1024;
/** The largest commit savepoint reads (its message is a step's one-line subject). */
export const MAX_COMMIT_BYTES = 1024 * 1024;

/** The header git hashes and stores before an object's body: `<type> <size>\0`. */
function objectHeader(type: string, size: number): string {
  return `${type} ${size}\0`;
}

/** Hashes `body` as a git object of `type`. */
export function makeObject(type: ObjectType, body: Buffer): GitObject {
  return { oid: hashObject(type, body), type, body };
}

/** The id git gives `body` as an object of `type`. */
export function hashObject(type: string, body: Buffer): string {
  return createHash('sha1').update(objectHeader(type, body.length)).update(body).digest('hex');
}

/** An object as a loose file holds it: header and body, deflated. */
export function encodeLoose(object: GitObject): Buffer {
  const raw = Buffer.concat([Buffer.from(objectHeader(object.type, object.body.length)), object.body]);
  return deflateFast(raw);
}

/**
 * `data` deflated at zlib's fastest level, with a window and a hash table sized to it. zlib's
 * defaults (a 32 KB window, memLevel 8) set up 256 KB of state for every call: for the few hundred
 * bytes of a journal entry's tree or commit, that allocation and its page faults cost more than
 * the compression (7 objects an append: 0.38 ms of it on a 2-core machine). A window at least as
 * large as the data loses nothing, and any inflater reads the stream (the zlib header names its
 * window; git inflates with the default, which takes every smaller one).
 */
export function deflateFast(data: Uint8Array, chunkSize?: number): Buffer {
  // 2^windowBits ≥ data.length, within zlib's 9..15.
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(data.length + 1))));
  const memLevel = Math.min(8, Math.max(1, windowBits - 6));
  return deflateSync(data, { level: zlib.Z_BEST_SPEED, windowBits, memLevel, ...(chunkSize ? { chunkSize } : {}) });
}

/** Where the objects directory `objectsDir` keeps `oid` as a loose file: `<2 hex digits>/<38>`. */
export function loosePath(objectsDir: string, oid: string): string {
  return join(objectsDir, oid.slice(0, 2), oid.slice(2));
}

// A loose object's header, `<type> <size>\0`, at the start of its inflated bytes.
const LOOSE_HEADER = /^(blob|tree|commit|tag) (\d{1,20})\0/;

/**
 * The loose object `oid` whose file is `path`, inflated whole; undefined when there is no such file
 * or it is not an object. With `maxBytes`, its header is inflated first (from the same read of the
 * file) and an object larger than that is refused (ObjectTooLargeError) before the rest is.
 */
export function readLooseFile(oid: string, path: string, maxBytes?: number): { type: string; body: Buffer } | undefined {
  try {
    const raw = readFileSync(path);
    const start =
      maxBytes === undefined
        ? undefined
        : LOOSE_HEADER.exec(inflateSync(raw.subarray(0, 512), { finishFlush: zlib.Z_SYNC_FLUSH }).toString('latin1', 0, 64));
    if (start && Number(start[2]) > maxBytes!) throw new ObjectTooLargeError(oid, start[1]!, Number(start[2]), maxBytes!);
    const inflated = inflateSync(raw);
    const header = LOOSE_HEADER.exec(inflated.toString('latin1', 0, 64));
    const body = header ? inflated.subarray(header[0].length) : undefined;
    return header && body!.length === Number(header[2]) ? { type: header[1]!, body: body! } : undefined;
  } catch (error) {
    if (error instanceof ObjectTooLargeError) throw error;
    return undefined; // no such file, or not a zlib stream
  }
}

/**
 * Serialises a tree in git's canonical order (a subtree sorts as if its name ended in '/'), into
 * one buffer. Every append re-serialises the trees on its path (up to 100 entries each), so this
 * sorts by precomputed keys, comparing plain strings when every name is ASCII (the same order as
 * comparing bytes) and the names' bytes otherwise. A name is written as its bytes
 * (os/path-bytes.ts: a name that is not UTF-8 keeps the bytes it has on disk).
 */
export function makeTree(entries: Tree): GitObject {
  const items: Array<{ name: string; entry: TreeEntry; key: string; bytes?: Buffer }> = [];
  let ascii = true;
  for (const [name, entry] of entries) {
    const key = entry.mode === TREE_MODE ? `${name}/` : name;
    if (ascii && !/^[\x00-\x7f]*$/.test(key)) ascii = false;
    items.push({ name, entry, key });
  }
  if (ascii) items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  else {
    for (const item of items) item.bytes = pathToBytes(item.key);
    items.sort((a, b) => Buffer.compare(a.bytes!, b.bytes!));
  }
  let size = 0;
  // "<mode> <name>\0" and 20 id bytes each (a subtree's key has a '/' its name has not).
  for (const item of items)
    size += item.entry.mode.length + (item.bytes ? item.bytes.length - (item.entry.mode === TREE_MODE ? 1 : 0) : item.name.length) + 22;
  const body = Buffer.alloc(size);
  let at = 0;
  for (const { name, entry, bytes } of items) {
    at += body.write(`${entry.mode} `, at, 'latin1');
    if (bytes) at += bytes.copy(body, at, 0, bytes.length - (entry.mode === TREE_MODE ? 1 : 0));
    else at += body.write(name, at, 'latin1');
    body[at++] = 0;
    at += body.write(entry.oid, at, 'hex');
  }
  return makeObject('tree', body.subarray(0, at));
}

/** Reads a tree object's body back into entries (git's `040000` is normalised to TREE_MODE). */
export function parseTree(body: Buffer): Tree {
  const entries: Tree = new Map();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(32, at);
    const nul = body.indexOf(0, space);
    // Read in place, without a view of each part: a long run's shard trees hold thousands of entries.
    const mode = body.toString('latin1', at, space);
    const name = pathFromBytes(body.subarray(space + 1, nul));
    const oid = body.toString('hex', nul + 1, nul + 21);
    entries.set(name, { mode: mode === '040000' ? TREE_MODE : mode, oid });
    at = nul + 21;
  }
  return entries;
}

/** A flat list of paths grouped into directories: each directory's own entries and its subdirectories. */
export interface PathDir<T> {
  files: Map<string, T>;
  dirs: Map<string, PathDir<T>>;
}

/** Groups `[path, value]` pairs by directory (`a/b/c.txt` lands in dirs a → b, as file `c.txt`). */
export function nestPaths<T>(items: Iterable<readonly [string, T]>): PathDir<T> {
  const root: PathDir<T> = { files: new Map(), dirs: new Map() };
  for (const [path, value] of items) {
    const names = path.split('/');
    const base = names.pop()!;
    let dir = root;
    for (const name of names) {
      let sub = dir.dirs.get(name);
      if (!sub) dir.dirs.set(name, (sub = { files: new Map(), dirs: new Map() }));
      dir = sub;
    }
    dir.files.set(base, value);
  }
  return root;
}

/** What a commit is made of; `timestamp` defaults to now. */
export interface CommitFields {
  tree: string;
  parents: string[];
  message: string;
  timestamp?: Date;
}

/** A commit as read back: its tree, its parents (first parent first) and its message. */
export interface CommitInfo {
  tree: string;
  parents: string[];
  message: string;
}

// The identity on journal commits: the journal is written by savepoint, not by the user.
const IDENTITY = 'savepoint <savepoint@localhost>';

/** Builds a journal commit (author and committer are savepoint, in UTC). */
export function makeCommit({ tree, parents, message, timestamp = new Date() }: CommitFields): GitObject {
  const when = `${Math.floor(timestamp.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${IDENTITY} ${when}`, `committer ${IDENTITY} ${when}`];
  const text = `${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`;
  return makeObject('commit', Buffer.from(text, 'utf8'));
}

/** Reads a commit object's body (`oid` only names it in the error for a commit without a tree). */
export function parseCommit(oid: string, body: Buffer): CommitInfo {
  const text = body.toString('utf8');
  const headerEnd = text.indexOf('\n\n');
  const header = text.slice(0, headerEnd === -1 ? text.length : headerEnd);
  const tree = /^tree ([0-9a-f]{40})$/m.exec(header)?.[1];
  if (!tree) throw new Error(`commit ${oid} has no tree`);
  const parents = [...header.matchAll(/^parent ([0-9a-f]{40})$/gm)].map((m) => m[1]!);
  return { tree, parents, message: headerEnd === -1 ? '' : text.slice(headerEnd + 2) };
}
