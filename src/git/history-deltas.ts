// The deltas git's pack-objects leaves out of a journal's pack. Every append writes a commit and
// rewrites the small trees on its path (the root, runs/, the run's, steps/), each a few bytes from
// the version before: a new tree id, a parent, a time, a subject. git stores a delta only when it
// is under half its object's size less 20 bytes, so these objects of 30 to 300 bytes stay whole:
// over 1,000 bash turns, 3,000 commits of 177 bytes and 9,000 such trees of 40-112 bytes, half of
// a journal's pack. This pass takes the pack git wrote and stores each whole commit as a delta of
// the commit before or after it on the first-parent line, and each whole tree of a commit's path
// as a delta of the tree at the same path in that neighbour, when the delta is smaller: 177 bytes
// a commit became about 120, the run's tree 112 became about 40 (bench/storage.ts). A small object
// git did store as a delta gets a delta of the same base made here when that is smaller: git copies
// only runs of 16 bytes and more, and step files of one kind differ by ids and numbers a few bytes
// apart (3% of a 1,000-turn journal's pack).
//
// What it writes is an ordinary version-2 pack (offset deltas, each base before its delta, chains
// at most MAX_DEPTH long, as git's own `--depth=50`): git reads it, `git gc` keeps its deltas (it
// reuses a pack's deltas unless told -f), and pack-reader.ts reads it as any pack git made. Every
// delta is checked to make its object byte for byte before it is kept; a pack this pass cannot read
// (a ref delta, an entry it does not understand) is left exactly as git wrote it.
import { crc32, deflateSync } from 'node:zlib';
import { assemblePack, type BuiltPack } from './pack-file.js';
import { Recent } from './pack-reader.js';
import {
  applyDelta,
  deltaSizes,
  entryHeader,
  indexCount,
  indexOffset,
  INDEX_IDS,
  inflateSized,
  isIndexV2,
  OFS_DELTA,
  parseEntryHeader,
  REF_DELTA,
  type PackedHeader,
} from './pack-format.js';

/** Commits and trees up to this size are tried as deltas of their neighbours (git deltifies larger ones itself). */
const MAX_OBJECT = 2048;
/** The longest delta chain this pass makes (git's default `--depth`). */
export const MAX_DEPTH = 50;
/** How deep under a commit's root tree the trees of its path are looked for (runs/<run>/steps/<shard> is four). */
const MAX_TREE_LEVELS = 5;
// A copy shorter than this costs as much as inserting its bytes.
const MIN_COPY = 6;
// The pass runs in the CLI's process, beside a run's steps: it lets the event loop turn every this
// many objects, so a roll-up in the background never holds a step up for long.
const YIELD_EVERY = 256;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
// How many objects' bytes are kept at once (a base and its neighbours are near one another).
const RECENT_BODIES = 8192;

const COMMIT = 1;
const TREE = 2;

interface Entry {
  oid: string;
  offset: number;
  end: number;
  header: PackedHeader;
  /** The object's type (a delta's base's). */
  type: number;
  base?: Entry;
  /** The size of the object a delta makes, once read. */
  resultSize?: number;
  /** Where it is in the new pack, and the length of its delta chain there. */
  newOffset: number;
  depth: number;
}

// A pack's entries by id, and an entry's object (its deltas applied) and that object's size.
interface PackObjects {
  byOid: Map<string, Entry>;
  body: (entry: Entry) => Buffer;
  size: (entry: Entry) => number;
}

/**
 * `pack` (with its index `idx`, both as git wrote them) with the journal's whole commits and small
 * trees stored as deltas of their neighbours where that is smaller; undefined when nothing got
 * smaller or the pack is not one this pass reads (then the caller keeps git's).
 */
export async function addHistoryDeltas(pack: Buffer, idx: Buffer): Promise<BuiltPack | undefined> {
  const entries = readEntries(pack, idx);
  if (!entries) return undefined;
  const byOid = new Map(entries.map((e) => [e.oid, e]));
  // An entry's stored data inflated (a delta's, or the object's): its header says its size.
  const stored = (entry: Entry): Buffer => inflateSized(pack.subarray(entry.offset + entry.header.at, entry.end), entry.header.size);
  // The objects made lately, not all of them: a pack of 20,000 objects held whole took 50 MB more
  // than its own size. Neighbours are near one another in the pack, and inflating again is cheap.
  const bodies = new Recent<Entry, Buffer>(RECENT_BODIES);
  const body = (entry: Entry): Buffer => {
    let made = bodies.get(entry);
    if (!made) {
      made = entry.base ? applyDelta(stored(entry), body(entry.base)) : stored(entry);
      bodies.set(entry, made);
    }
    return made;
  };
  const size = (entry: Entry): number => {
    if (!entry.base) return entry.header.size;
    if (entry.resultSize === undefined) entry.resultSize = bodies.get(entry)?.length ?? deltaSizes(stored(entry)).result;
    return entry.resultSize;
  };
  const partners = await neighbours(entries, { byOid, body, size });
  if (partners.size === 0) return undefined;

  const parts: Buffer[] = [];
  const index: Array<{ oid: Buffer; offset: number; crc: number }> = [];
  let at = 12;
  let saved = 0;
  for (const [i, entry] of entries.entries()) {
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await turn();
    const original = pack.subarray(entry.offset, entry.end);
    let bytes = original;
    entry.depth = entry.base ? entry.base.depth + 1 : 0;
    if (entry.base) {
      // git's delta, its distance to its base made anew; or, for a small object, a delta of the same
      // base made here when smaller (git copies runs of 16 bytes and more; the step files of one
      // kind differ by ids and numbers a few bytes apart).
      bytes = Buffer.concat([
        entryHeader(OFS_DELTA, entry.header.size),
        offsetBytes(at - entry.base.newOffset),
        pack.subarray(entry.offset + entry.header.at, entry.end),
      ]);
      if (size(entry) <= MAX_OBJECT) {
        const candidate = deltaEntry(body(entry.base), body(entry), at - entry.base.newOffset);
        if (candidate && candidate.length < bytes.length) bytes = candidate;
      }
    } else {
      for (const other of partners.get(entry) ?? []) {
        if (other.newOffset < 0 || other.depth >= MAX_DEPTH) continue; // not written yet: a base comes first
        const candidate = deltaEntry(body(other), body(entry), at - other.newOffset);
        if (candidate && candidate.length < bytes.length) {
          bytes = candidate;
          entry.depth = other.depth + 1;
        }
      }
    }
    saved += original.length - bytes.length;
    entry.newOffset = at;
    index.push({ oid: Buffer.from(entry.oid, 'hex'), offset: at, crc: crc32(bytes) });
    parts.push(bytes);
    at += bytes.length;
  }
  if (saved <= 0) return undefined;
  return assemblePack(parts, index);
}

// The pack's entries in the order they are in it, each with its delta base; undefined for a pack
// with a ref delta or a base that is not an entry.
function readEntries(pack: Buffer, idx: Buffer): Entry[] | undefined {
  if (!isIndexV2(idx) || pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') return undefined;
  const count = indexCount(idx);
  if (pack.readUInt32BE(8) !== count) return undefined;
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const oid = idx.toString('hex', INDEX_IDS + i * 20, INDEX_IDS + i * 20 + 20);
    entries.push({
      oid,
      offset: indexOffset(idx, count, i),
      end: 0,
      header: undefined as unknown as PackedHeader,
      type: 0,
      newOffset: -1,
      depth: 0,
    });
  }
  entries.sort((a, b) => a.offset - b.offset);
  const byOffset = new Map<number, Entry>();
  for (const [i, entry] of entries.entries()) {
    entry.end = entries[i + 1]?.offset ?? pack.length - 20;
    entry.header = parseEntryHeader(pack.subarray(entry.offset, Math.min(entry.end, entry.offset + 32)));
    if (entry.header.type === REF_DELTA) return undefined;
    if (entry.header.type === OFS_DELTA) {
      entry.base = byOffset.get(entry.offset - entry.header.distance!);
      if (!entry.base) return undefined;
      entry.type = entry.base.type;
    } else {
      entry.type = entry.header.type;
    }
    byOffset.set(entry.offset, entry);
  }
  return entries;
}

// For each whole commit or small tree, the objects it may be a delta of: its commit's first parent
// (and child), and the trees at the same paths in those commits.
async function neighbours(entries: Entry[], pack: PackObjects): Promise<Map<Entry, Entry[]>> {
  const { byOid, body, size } = pack;
  // A commit's tree and first parent, and the trees of its path: a commit's parent is next to it in
  // the pack (git lays commits out newest first), so only the last few are kept.
  const read = (commit: Entry) => {
    const text = body(commit).toString('latin1');
    const tree = byOid.get(/^tree ([0-9a-f]{40})\n/.exec(text)?.[1] ?? '');
    const parent = byOid.get(/\nparent ([0-9a-f]{40})\n/.exec(text)?.[1] ?? '');
    const paths = new Map<string, Entry>();
    if (tree) walkTrees(tree, '', 0, paths, pack);
    return { parent: parent?.type === COMMIT && size(parent) <= MAX_OBJECT ? parent : undefined, paths };
  };
  const recent = new Recent<Entry, ReturnType<typeof read>>(16);
  const commitOf = (commit: Entry) => {
    let known = recent.get(commit);
    if (!known) recent.set(commit, (known = read(commit)));
    return known;
  };
  const partners = new Map<Entry, Entry[]>();
  // Each of the two may be stored as a delta of the other, unless git made it a delta already.
  const partner = (x: Entry, y: Entry) => {
    if (x !== y && !x.base) partners.set(x, [...(partners.get(x) ?? []), y]);
  };
  const pair = (a: Entry, b: Entry) => (partner(a, b), partner(b, a));
  for (const [i, commit] of entries.entries()) {
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await turn();
    if (commit.type !== COMMIT || size(commit) > MAX_OBJECT) continue;
    const { parent, paths } = commitOf(commit);
    if (!parent) continue;
    pair(commit, parent);
    const theirs = commitOf(parent).paths;
    for (const [path, tree] of paths) {
      const before = theirs.get(path);
      if (before) pair(tree, before);
    }
  }
  return partners;
}

// The trees of `tree`'s path under a commit's root (`found`: path -> tree), down to MAX_TREE_LEVELS
// and only through trees small enough to be tried as deltas.
function walkTrees(tree: Entry, path: string, level: number, found: Map<string, Entry>, pack: PackObjects): void {
  if (tree.type !== TREE || pack.size(tree) > MAX_OBJECT) return;
  found.set(path, tree);
  if (level >= MAX_TREE_LEVELS) return;
  const data = pack.body(tree);
  for (let at = 0; at < data.length;) {
    const space = data.indexOf(0x20, at);
    const nul = data.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > data.length) return;
    const isTree = space - at === 5 && data[at] === 0x34; // mode 40000 (a file's starts with 1)
    const child = isTree ? pack.byOid.get(data.toString('hex', nul + 1, nul + 21)) : undefined;
    if (child) walkTrees(child, `${path}/${data.toString('latin1', space + 1, nul)}`, level + 1, found, pack);
    at = nul + 21;
  }
}

// The pack entry storing `target` as a delta of `base`, `distance` bytes before it; undefined in the
// case that never happens, a delta that does not make `target` (never trusted either).
function deltaEntry(base: Buffer, target: Buffer, distance: number): Buffer | undefined {
  const delta = makeDelta(base, target);
  if (!applyDelta(delta, base).equals(target)) return undefined;
  return Buffer.concat([entryHeader(OFS_DELTA, delta.length), offsetBytes(distance), deflateSync(delta, { level: 9 })]);
}

// An offset delta's distance to its base, as git writes it (7 bits a byte, most significant first,
// each continuation byte one less).
function offsetBytes(distance: number): Buffer {
  const bytes = [distance & 0x7f];
  while ((distance = Math.floor(distance / 128)) > 0) bytes.unshift(0x80 | (--distance & 0x7f));
  return Buffer.from(bytes);
}

/** A git delta making `target` from `base`: copies of the longest runs found through a 4-byte index of the base, inserts between them. */
export function makeDelta(base: Buffer, target: Buffer): Buffer {
  const out: number[] = [...sizeBytes(base.length), ...sizeBytes(target.length)];
  const where = new Map<number, number[]>();
  for (let i = 0; i + 4 <= base.length; i++) {
    const key = base.readUInt32BE(i);
    const list = where.get(key);
    if (!list) where.set(key, [i]);
    else if (list.length < 8) list.push(i);
  }
  let pending: number[] = [];
  const flush = () => {
    for (let i = 0; i < pending.length; i += 127) {
      const chunk = pending.slice(i, i + 127);
      out.push(chunk.length, ...chunk);
    }
    pending = [];
  };
  for (let i = 0; i < target.length;) {
    let bestAt = -1;
    let bestLength = 0;
    if (i + 4 <= target.length) {
      for (const start of where.get(target.readUInt32BE(i)) ?? []) {
        let length = 0;
        while (i + length < target.length && start + length < base.length && length < 0xffff && base[start + length] === target[i + length])
          length++;
        if (length > bestLength) [bestAt, bestLength] = [start, length];
      }
    }
    if (bestLength < MIN_COPY) {
      pending.push(target[i++]!);
      continue;
    }
    flush();
    let op = 0x80;
    const args: number[] = [];
    for (let b = 0; b < 4; b++) {
      const byte = (bestAt >>> (8 * b)) & 0xff;
      if (byte) ((op |= 1 << b), args.push(byte));
    }
    for (let b = 0; b < 2; b++) {
      const byte = (bestLength >>> (8 * b)) & 0xff;
      if (byte) ((op |= 1 << (4 + b)), args.push(byte));
    }
    out.push(op, ...args);
    i += bestLength;
  }
  flush();
  return Buffer.from(out);
}

function sizeBytes(size: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = size & 0x7f;
    size = Math.floor(size / 128);
    if (size) byte |= 0x80;
    bytes.push(byte);
  } while (size);
  return bytes;
}
