// Git objects: building blobs, trees and commits, and storing them crash-safely. We serialise and
// hash them ourselves (the formats are tiny) so that every object of an append is known before any
// is written, and each is written whole: isomorphic-git writes objects in place without fsync and
// never rewrites a torn one. Reading is ours too, loose and packed (isomorphic-git's packed reads
// cost ~0.5 ms an object: a 10,000-step journal took 5 s to open after `git gc`); isomorphic-git
// remains the fallback for anything the pack reader declines.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import * as nodeFs from 'node:fs';
import { dirname, join } from 'node:path';
import { inflateSync, deflateSync, constants as zlib } from 'node:zlib';
import { writeFileDurably, writeFileDurablyAsync } from './durable-file.js';

export type ObjectType = 'blob' | 'tree' | 'commit';

// One object ready to store: its id and its uncompressed body (without the git header).
export interface GitObject {
  oid: string;
  type: ObjectType;
  body: Buffer;
}

// A tree entry; `mode` is git's octal string: 100644 file, 100755 executable, 120000 link, 40000 tree.
export interface TreeEntry {
  mode: string;
  oid: string;
}

export type Tree = Map<string, TreeEntry>;

export const TREE_MODE = '40000';

let tempCounter = 0;
export const FILE_MODE = '100644';

// Hashes `body` as a git object of `type`.
export function makeObject(type: ObjectType, body: Buffer): GitObject {
  const hash = createHash('sha1');
  hash.update(`${type} ${body.length}\0`);
  hash.update(body);
  return { oid: hash.digest('hex'), type, body };
}

// Serialises a tree in git's canonical order (a subtree sorts as if its name ended in '/'), into
// one buffer. Every append re-serialises the trees on its path (up to 100 entries each), so this
// sorts by precomputed keys, comparing plain strings when every name is ASCII (the same order as
// comparing bytes) and UTF-8 bytes otherwise.
export function makeTree(entries: Tree): GitObject {
  const items: Array<{ name: string; entry: TreeEntry; key: string }> = [];
  let ascii = true;
  let size = 0;
  for (const [name, entry] of entries) {
    const key = entry.mode === TREE_MODE ? `${name}/` : name;
    if (ascii && !/^[\x00-\x7f]*$/.test(key)) ascii = false;
    items.push({ name, entry, key });
    size += entry.mode.length + Buffer.byteLength(name) + 22; // "<mode> <name>\0" and 20 id bytes
  }
  if (ascii) items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  else items.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  const body = Buffer.alloc(size);
  let at = 0;
  for (const { name, entry } of items) {
    at += body.write(`${entry.mode} ${name}\0`, at);
    at += body.write(entry.oid, at, 'hex');
  }
  return makeObject('tree', body.subarray(0, at));
}

// A flat list of paths grouped into directories: each directory's own entries and its subdirectories.
export interface PathDir<T> {
  files: Map<string, T>;
  dirs: Map<string, PathDir<T>>;
}

// Groups `[path, value]` pairs by directory (`a/b/c.txt` lands in dirs a → b, as file `c.txt`).
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

export interface CommitFields {
  tree: string;
  parents: string[];
  message: string;
  timestamp?: Date;
}

// The identity on journal commits: the journal is written by savepoint, not by the user.
const IDENTITY = 'savepoint <savepoint@localhost>';

export function makeCommit({ tree, parents, message, timestamp = new Date() }: CommitFields): GitObject {
  const when = `${Math.floor(timestamp.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${IDENTITY} ${when}`, `committer ${IDENTITY} ${when}`];
  const text = `${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`;
  return makeObject('commit', Buffer.from(text, 'utf8'));
}

// The object database of one repository (its common git dir), with one read cache for the process.
export class ObjectStore {
  readonly gitdir: string;
  // isomorphic-git's cache: without it every packed read re-loads the pack index.
  private readonly cache: object = {};
  private readonly packs: PackReader;

  constructor(gitdir: string) {
    this.gitdir = gitdir;
    this.packs = new PackReader(join(gitdir, 'objects', 'pack'));
  }

  private pathOf(oid: string): string {
    return join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  // Stores objects durably; ones already present as non-empty loose files are skipped. A torn
  // (empty) file left by some other writer's crash is replaced, since rename overwrites it.
  write(objects: Iterable<GitObject>): void {
    for (const { path, data, temp } of this.toStore(objects)) writeFileDurably(path, data, 0o444, temp);
  }

  // The same, with the objects' fsyncs in flight together (on the libuv thread pool) rather than
  // one after another: the file system commits them together, which takes a third off an append
  // on a quiet disk and more on a busy one (bench/journal.ts).
  // Each object is still written whole (temp file, fsync, rename), and all of them are on disk
  // before this resolves, so the ref can only ever point at objects that are.
  async writeAll(objects: Iterable<GitObject>): Promise<void> {
    const results = await Promise.allSettled(this.toStore(objects).map(({ path, data, temp }) => writeFileDurablyAsync(path, data, 0o444, temp)));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private toStore(objects: Iterable<GitObject>): Array<{ path: string; data: Buffer; temp: string }> {
    const out: Array<{ path: string; data: Buffer; temp: string }> = [];
    const seen = new Set<string>();
    for (const object of objects) {
      const path = this.pathOf(object.oid);
      if (seen.has(object.oid) || (existsSync(path) && statSync(path).size > 0)) continue;
      seen.add(object.oid);
      const raw = Buffer.concat([Buffer.from(`${object.type} ${object.body.length}\0`), object.body]);
      // The temporary file is named the way git names its own (`tmp_obj_*`): one left by a kill -9
      // is then ignored by `git fsck` (any other name is reported as "bad sha1 file" for ever) and
      // removed by `git gc`/`git prune` like git's own leftovers.
      const temp = join(dirname(path), `tmp_obj_${process.pid}_${tempCounter++}`);
      out.push({ path, data: deflateSync(raw, { level: zlib.Z_BEST_SPEED }), temp });
    }
    return out;
  }

  // Reads an object's body. Loose objects are read directly (fast), and so are packed ones (after
  // `git gc`); isomorphic-git reads whatever the pack reader below declines.
  async read(oid: string, expected: ObjectType): Promise<Buffer> {
    // The packs already seen first (no system call), then the loose file, then packs that appeared
    // since (a gc or a fetch): a missing loose file costs an exception, ~10 µs an object.
    const found = this.packs.read(oid, false) ?? this.readLoose(oid) ?? this.packs.read(oid, true);
    if (found) {
      if (found.type !== expected) throw new Error(`object ${oid} is a ${found.type}, expected a ${expected}`);
      return found.body;
    }
    // isomorphic-git is loaded only when our own readers decline: it costs 0.1 s of start-up.
    const { default: git } = await import('isomorphic-git');
    const { type, object } = await git.readObject({ fs: nodeFs, gitdir: this.gitdir, oid, format: 'content', cache: this.cache });
    if (type !== expected) throw new Error(`object ${oid} is a ${type}, expected a ${expected}`);
    return Buffer.from(object as Uint8Array);
  }

  private readLoose(oid: string): { type: string; body: Buffer } | undefined {
    let raw: Buffer;
    try {
      raw = inflateSync(readFileSync(this.pathOf(oid)));
    } catch {
      return undefined;
    }
    return { type: raw.subarray(0, raw.indexOf(32)).toString(), body: raw.subarray(raw.indexOf(0) + 1) };
  }

  async readTree(oid: string): Promise<Tree> {
    return parseTree(await this.read(oid, 'tree'));
  }

  // The tree a commit points at, and its parents.
  async readCommit(oid: string): Promise<{ tree: string; parents: string[]; message: string }> {
    const text = (await this.read(oid, 'commit')).toString('utf8');
    const headerEnd = text.indexOf('\n\n');
    const header = text.slice(0, headerEnd === -1 ? text.length : headerEnd);
    const tree = /^tree ([0-9a-f]{40})$/m.exec(header)?.[1];
    if (!tree) throw new Error(`commit ${oid} has no tree`);
    const parents = [...header.matchAll(/^parent ([0-9a-f]{40})$/gm)].map((m) => m[1]!);
    return { tree, parents, message: headerEnd === -1 ? '' : text.slice(headerEnd + 2) };
  }
}

export function parseTree(body: Buffer): Tree {
  const entries: Tree = new Map();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(32, at);
    const nul = body.indexOf(0, space);
    const mode = body.subarray(at, space).toString();
    const name = body.subarray(space + 1, nul).toString('utf8');
    const oid = body.subarray(nul + 1, nul + 21).toString('hex');
    entries.set(name, { mode: mode === '040000' ? TREE_MODE : mode, oid });
    at = nul + 21;
  }
  return entries;
}

// ── Packed objects ──────────────────────────────────────────────────────────────────────────────
// A reader for `objects/pack/*.pack` through their version-2 `.idx`, enough for what `git gc` and
// `git repack` write: whole objects and offset/ref deltas. Every object it returns is re-hashed
// against its id; anything it cannot read (an old v1 index, a base in another pack, damage) makes
// it return undefined, and the caller falls back to isomorphic-git. Packs are immutable, so what
// was read stays valid; a pack removed by a repack only makes a later read rescan the directory.

interface Pack {
  path: string;
  size: number;
  // The .idx file: fan-out table, sorted ids, CRCs, offsets, large offsets.
  idx: Buffer;
  count: number;
  // The whole .pack, for packs small enough to keep in memory; larger ones are read per object.
  data?: Buffer;
}

const PACK_TYPES = ['', 'commit', 'tree', 'blob', 'tag'] as const;
const OFS_DELTA = 6;
const REF_DELTA = 7;
// Packs up to this size are read whole and kept (a journal's pack is a few MB); larger ones (a
// big repository's history) are read object by object.
const WHOLE_PACK_BYTES = 32 * 1024 * 1024;
// Delta bases kept resolved, so a chain of deltas is not re-inflated for every object on it (on a
// gc'd 10,000-step journal, 4 MB cuts the inflates from 83,000 to 13,700, close to one per object).
const BASE_CACHE_BYTES = 4 * 1024 * 1024;

class PackReader {
  private readonly dir: string;
  private packs: Pack[] | undefined;
  private readonly bases = new Map<string, { type: number; body: Buffer }>();
  private baseBytes = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  // The object from the packs known so far, or (`rescan`) from the packs there are now.
  read(oid: string, rescan: boolean): { type: string; body: Buffer } | undefined {
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
    if (rescan || !this.packs) this.packs = this.scan();
    const found = this.locate(Buffer.from(oid, 'hex'));
    if (!found) return undefined;
    try {
      const object = this.objectAt(found.pack, found.offset, 0);
      const type = PACK_TYPES[object.type];
      return type && hashMatches(type, object.body, oid) ? { type, body: object.body } : undefined;
    } catch {
      this.packs = undefined; // removed by a repack, or damaged: look again next time
      return undefined;
    }
  }

  private locate(want: Buffer): { pack: Pack; offset: number } | undefined {
    for (const pack of this.packs ?? []) {
      const offset = findOffset(pack, want);
      if (offset !== undefined) return { pack, offset };
    }
    return undefined;
  }

  private scan(): Pack[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((name) => name.endsWith('.idx'));
    } catch {
      return [];
    }
    const known = new Map((this.packs ?? []).map((pack) => [pack.path, pack]));
    const packs: Pack[] = [];
    for (const name of names) {
      const path = join(this.dir, `${name.slice(0, -4)}.pack`);
      const existing = known.get(path);
      if (existing) {
        packs.push(existing);
        continue;
      }
      try {
        const idx = readFileSync(join(this.dir, name));
        // Version 2 only: "\377tOc", version 2, 256 fan-out counts.
        if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) continue;
        packs.push({ path, size: statSync(path).size, idx, count: idx.readUInt32BE(8 + 255 * 4) });
      } catch {
        // a pack being written or removed right now: skip it
      }
    }
    return packs;
  }

  private bytes(pack: Pack, start: number, length: number): Buffer {
    const end = Math.min(start + length, pack.size - 20); // the pack ends with a 20-byte checksum
    if (pack.size <= WHOLE_PACK_BYTES) {
      pack.data ??= readFileSync(pack.path);
      return pack.data.subarray(start, end);
    }
    const buffer = Buffer.allocUnsafe(Math.max(end - start, 0));
    const fd = openSync(pack.path, 'r');
    try {
      const read = readSync(fd, buffer, 0, buffer.length, start);
      return buffer.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  }

  // The object at `offset`, its deltas applied.
  private objectAt(pack: Pack, offset: number, depth: number): { type: number; body: Buffer } {
    const key = `${pack.path}:${offset}`;
    const cached = this.bases.get(key);
    if (cached) return cached;
    if (depth > 10_000) throw new Error('delta chain too long');
    let head = this.bytes(pack, offset, 32);
    let at = 0;
    let byte = head[at++]!;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let shift = 4; byte & 0x80; shift += 7) {
      byte = head[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
    }
    let base: { type: number; body: Buffer } | undefined;
    if (type === OFS_DELTA) {
      byte = head[at++]!;
      let distance = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[at++]!;
        distance = (distance + 1) * 128 + (byte & 0x7f);
      }
      base = this.objectAt(pack, offset - distance, depth + 1);
    } else if (type === REF_DELTA) {
      const baseOffset = findOffset(pack, head.subarray(at, at + 20));
      if (baseOffset === undefined) throw new Error('ref-delta base outside this pack');
      at += 20;
      base = this.objectAt(pack, baseOffset, depth + 1);
    } else if (!PACK_TYPES[type]) {
      throw new Error(`unknown packed object type ${type}`);
    }
    // zlib's worst case is a little over the input size; inflate stops at the end of the stream.
    head = this.bytes(pack, offset + at, size + (size >> 10) + 64);
    const data = inflateSync(head, { chunkSize: Math.max(64, size + 1) }); // one right-sized output buffer
    if (data.length !== size) throw new Error('packed object has the wrong size');
    if (!base) return { type, body: data };
    const object = { type: base.type, body: applyDelta(data, base.body) };
    if (depth > 0) this.remember(key, object); // it is itself a base: keep it for its siblings
    return object;
  }

  private remember(key: string, object: { type: number; body: Buffer }): void {
    this.bases.set(key, object);
    this.baseBytes += object.body.length;
    for (const [oldest, value] of this.bases) {
      if (this.baseBytes <= BASE_CACHE_BYTES) break;
      this.bases.delete(oldest);
      this.baseBytes -= value.body.length;
    }
  }
}

// The pack offset of the object `want` (20 bytes), by binary search within its fan-out bucket.
function findOffset(pack: Pack, want: Buffer): number | undefined {
  const { idx, count } = pack;
  const first = want[0]!;
  const prefix = want.readUInt32BE(0); // compared first: a full compare only on a 4-byte match
  let low = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
  let high = idx.readUInt32BE(8 + first * 4);
  const names = 8 + 1024;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = names + middle * 20;
    const head = idx.readUInt32BE(at);
    const order = head !== prefix ? (head < prefix ? -1 : 1) : idx.compare(want, 0, 20, at, at + 20);
    if (order === 0) {
      const offset = idx.readUInt32BE(names + count * 24 + middle * 4);
      if (!(offset & 0x80000000)) return offset;
      const large = names + count * 28 + (offset & 0x7fffffff) * 8;
      return idx.readUInt32BE(large) * 2 ** 32 + idx.readUInt32BE(large + 4);
    }
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return undefined;
}

// Git's delta format: the base size, the result size, then copy-from-base and insert instructions.
function applyDelta(delta: Buffer, base: Buffer): Buffer {
  let at = 0;
  const size = (): number => {
    let value = 0;
    let byte: number;
    let shift = 0;
    do {
      byte = delta[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  if (size() !== base.length) throw new Error('delta base has the wrong size');
  const out = Buffer.allocUnsafe(size());
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let offset = 0;
      let length = 0;
      if (op & 0x01) offset += delta[at++]!;
      if (op & 0x02) offset += delta[at++]! * 0x100;
      if (op & 0x04) offset += delta[at++]! * 0x10000;
      if (op & 0x08) offset += delta[at++]! * 0x1000000;
      if (op & 0x10) length += delta[at++]!;
      if (op & 0x20) length += delta[at++]! * 0x100;
      if (op & 0x40) length += delta[at++]! * 0x10000;
      if (length === 0) length = 0x10000;
      if (offset + length > base.length || written + length > out.length) throw new Error('delta copies out of range');
      if (length < 128) for (let i = 0; i < length; i++) out[written + i] = base[offset + i]!; // Buffer.copy costs more
      else base.copy(out, written, offset, offset + length);
      written += length;
    } else if (op) {
      if (at + op > delta.length || written + op > out.length) throw new Error('delta inserts out of range');
      for (let i = 0; i < op; i++) out[written + i] = delta[at + i]!;
      at += op;
      written += op;
    } else {
      throw new Error('delta has a reserved instruction');
    }
  }
  if (written !== out.length) throw new Error('delta result has the wrong size');
  return out;
}

function hashMatches(type: string, body: Buffer, oid: string): boolean {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex') === oid;
}
