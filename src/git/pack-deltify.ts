// The journal's objects deltified into one pack by what they are, not by git's guesses. git's
// `pack-objects` pairs objects by size and a hash of their names, and never deltifies an object
// whose delta would be more than half its size, which rules out every small tree (a journal tree
// of one entry whose id changed: a 31-byte object with 20 new bytes). Here each object is tried
// against what it most likely derives from, found by walking the commits newest first: a commit
// against the commits just after it, a tree or file against the one at the same path in the next
// commit (and the last one kept whole there), a new entry file against the one before it in its
// directory of the same kind (`000196-run_bash.json` beside `000198-run_bash.json`). The smaller of
// delta and whole object is kept. Newer objects come first and are the bases, as git orders them, so
// the tip reads with the fewest deltas applied; chains stop at MAX_DEPTH. Every delta is applied
// back and compared before it is kept. The result is what `git gc` writes: a version-2 pack and
// index, deltas as OFS_DELTA (100 bash turns: 180 KB of pack and index, against 240 KB for git's
// best, `git repack -adf --window=250 --depth=250`).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { encodeDelta } from './delta.js';
import { applyDelta } from './pack-delta.js';
import { decodeLoose, hashObject, parseCommit, parseTree, TREE_MODE } from './git-object.js';
import { packIndexIds, type BuiltPack } from './pack-file.js';
import { buildIndex, crc32, entryHeader, offsetBytes } from './pack-format.js';
import { PackReader } from './pack-reader.js';

/** The longest chain of deltas an object is put at the end of (git's default: 50). */
export const MAX_DEPTH = 50;
/** An object larger than this leaves the roll-up to git (a delta search over it would hold up the run's end). */
const MAX_DELTA_BYTES = 1024 * 1024;
/**
 * Past this many objects, or this many bytes of them, git deltifies instead (in the background,
 * with its own memory): this runs in the CLI's process at a run's end, about 60 µs an object.
 */
export const MAX_OBJECTS = 12_000;
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
/** A delta this short is kept without deflating the whole object to compare (a changed tree entry). */
const SURE_DELTA_BYTES = 64;
/** How many of the commits just emitted a commit is tried against. */
const COMMIT_CANDIDATES = 3;

const TYPE_CODES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const OFS_DELTA = 6;

/** An object to pack: its type (`commit`, `tree`, `blob`, `tag`) and body. */
export interface LooseBody {
  type: string;
  body: Buffer;
}

/**
 * Every object of the packs at `packBases` (paths without `.pack`) and of the loose objects
 * `loose`, read and checked against its id (by the pack reader: a pack's trailer, or each object
 * hashed); throws when one cannot be read, or when they come to more than MAX_TOTAL_BYTES or
 * hold an object too large to deltify here (git does better with those).
 */
export function readObjects(objectsDir: string, packBases: string[], loose: string[]): Map<string, LooseBody> {
  const objects = new Map<string, LooseBody>();
  let total = 0;
  const add = (oid: string, object: LooseBody): void => {
    total += object.body.length;
    if (object.body.length > MAX_DELTA_BYTES || total > MAX_TOTAL_BYTES) throw new Error('too large to deltify in this process');
    objects.set(oid, object);
  };
  const reader = new PackReader(join(objectsDir, 'pack'));
  for (const base of packBases) {
    for (const oid of packIndexIds(readFileSync(`${base}.idx`))) {
      const object = reader.read(oid, false);
      if (!object) throw new Error(`object ${oid} of ${base}.pack could not be read`);
      add(oid, object);
    }
  }
  for (const oid of loose) {
    const object = decodeLoose(zlib.inflateSync(readFileSync(join(objectsDir, oid.slice(0, 2), oid.slice(2)))));
    if (!object || hashObject(object.type, object.body) !== oid) throw new Error(`loose object ${oid} could not be read`);
    add(oid, object);
  }
  return objects;
}

/**
 * Whether the pack directory `packDir` (one pack: a roll-up's work directory) gives back every
 * object of `objects` as it is there, read through the journal's own pack reader.
 */
export function packHolds(packDir: string, objects: Map<string, LooseBody>): boolean {
  const reader = new PackReader(packDir);
  for (const [oid, object] of objects) {
    const read = reader.read(oid, false);
    if (!read || read.type !== object.type || !read.body.equals(object.body)) return false;
  }
  return true;
}

interface Placed {
  offset: number;
  depth: number;
}

/**
 * One pack of every object in `objects` (by id), deltified as described above. Objects no commit
 * of the set leads to are packed too (whole, or against the one packed before them of their type).
 */
export function buildDeltifiedPack(objects: Map<string, LooseBody>): BuiltPack {
  const writer = new DeltaPackWriter(objects);
  const lastOfType = new Map<string, string>();
  // The newest version packed at each path (trees and files), and the last one packed whole there.
  const atPath = new Map<string, string>();
  const wholeAt = new Map<string, string>();
  // The latest file of each kind in each directory: `runs/x/steps/000\0-run_bash.json`.
  const sibling = new Map<string, string>();
  const recent: string[] = [];
  const walk = (tree: string, path: string): void => {
    if (writer.placed(tree)) return;
    const object = objects.get(tree);
    if (!object || object.type !== 'tree') return;
    writer.put(tree, [atPath.get(path), wholeAt.get(path)]);
    note(tree, path);
    for (const [name, entry] of parseTree(object.body)) {
      const sub = path ? `${path}/${name}` : name;
      if (entry.mode === TREE_MODE) {
        walk(entry.oid, sub);
        continue;
      }
      if (writer.placed(entry.oid) || objects.get(entry.oid)?.type !== 'blob') continue;
      const kin = `${path}\0${name.replace(/^\d+/, '')}`;
      writer.put(entry.oid, [atPath.get(sub), sibling.get(kin), wholeAt.get(sub)]);
      note(entry.oid, sub);
      sibling.set(kin, entry.oid);
    }
  };
  const note = (oid: string, path: string): void => {
    atPath.set(path, oid);
    if (writer.depth(oid) === 0) wholeAt.set(path, oid);
  };
  for (const commit of newestFirst(objects)) {
    writer.put(commit, recent.slice(-COMMIT_CANDIDATES));
    recent.push(commit);
    walk(parseCommit(commit, objects.get(commit)!.body).tree, '');
  }
  for (const [oid, object] of objects) {
    if (writer.placed(oid)) continue;
    writer.put(oid, [lastOfType.get(object.type)]);
    lastOfType.set(object.type, oid);
  }
  return writer.build();
}

// The commits of the set, each after every commit of the set it is a parent of (children first):
// a journal's first-parent line from its tip down, side branches (fetched journals) after.
function newestFirst(objects: Map<string, LooseBody>): string[] {
  const parents = new Map<string, string[]>();
  const children = new Map<string, number>();
  for (const [oid, object] of objects) {
    if (object.type !== 'commit') continue;
    const inSet = parseCommit(oid, object.body).parents.filter((p) => objects.get(p)?.type === 'commit');
    parents.set(oid, inSet);
    if (!children.has(oid)) children.set(oid, 0);
    for (const p of inSet) children.set(p, (children.get(p) ?? 0) + 1);
  }
  const ready = [...parents.keys()].filter((oid) => children.get(oid) === 0).reverse();
  const order: string[] = [];
  while (ready.length) {
    const oid = ready.pop()!;
    order.push(oid);
    // Pushed last-first, so the first parent is taken next.
    for (const p of [...parents.get(oid)!].reverse()) {
      const left = children.get(p)! - 1;
      children.set(p, left);
      if (left === 0) ready.push(p);
    }
  }
  return order;
}

// The pack as it is written: entries one after the other, each whole or a delta against an entry
// before it.
class DeltaPackWriter {
  private readonly objects: Map<string, LooseBody>;
  private readonly chunks: Buffer[] = [];
  private readonly entries: Array<{ oid: Buffer; offset: number; crc: number }> = [];
  private readonly where = new Map<string, Placed>();
  private offset = 12;

  constructor(objects: Map<string, LooseBody>) {
    this.objects = objects;
  }

  placed(oid: string): boolean {
    return this.where.has(oid);
  }

  depth(oid: string): number {
    return this.where.get(oid)?.depth ?? 0;
  }

  /**
   * Packs `oid` whole, or as a delta against the best of `bases` (those packed already, of its
   * type, not at the end of a chain MAX_DEPTH long), whichever takes fewer bytes. Only the shortest
   * delta is deflated, and the whole object too unless that delta is a few bytes.
   */
  put(oid: string, bases: Array<string | undefined>): void {
    const object = this.objects.get(oid);
    if (!object || this.where.has(oid)) return;
    let best: { delta: Buffer; base: Placed } | undefined;
    for (const base of new Set(bases)) {
      const at = base === undefined || base === oid ? undefined : this.where.get(base);
      const source = at && this.objects.get(base!);
      if (!at || !source || source.type !== object.type || at.depth >= MAX_DEPTH) continue;
      const delta = encodeDelta(source.body, object.body, best?.delta.length ?? object.body.length);
      if (delta && applyDelta(delta, source.body).equals(object.body)) best = { delta, base: at };
    }
    let header: Buffer | undefined;
    let data: Buffer | undefined;
    if (best) {
      data = deflate(best.delta);
      header = Buffer.concat([entryHeader(OFS_DELTA, best.delta.length), offsetBytes(this.offset - best.base.offset)]);
    }
    if (!best || best.delta.length > SURE_DELTA_BYTES) {
      const whole = deflate(object.body);
      const wholeHeader = entryHeader(TYPE_CODES[object.type], object.body.length);
      if (!data || !header || wholeHeader.length + whole.length <= header.length + data.length) {
        [header, data, best] = [wholeHeader, whole, undefined];
      }
    }
    this.where.set(oid, { offset: this.offset, depth: best ? best.base.depth + 1 : 0 });
    this.entries.push({ oid: Buffer.from(oid, 'hex'), offset: this.offset, crc: crc32(data!, crc32(header!)) });
    this.chunks.push(header!, data!);
    this.offset += header!.length + data!.length;
  }

  build(): BuiltPack {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(this.entries.length, 8);
    const body = Buffer.concat([header, ...this.chunks]);
    const checksum = createHash('sha1').update(body).digest();
    return { id: checksum.toString('hex'), pack: Buffer.concat([body, checksum]), idx: buildIndex(this.entries, checksum), count: this.entries.length };
  }
}

// zlib's best compression, with a window and hash table no larger than the data needs (the
// defaults allocate a quarter of a megabyte for every 30-byte delta).
function deflate(data: Buffer): Buffer {
  let windowBits = 9;
  while (windowBits < 15 && 1 << windowBits < data.length + 262) windowBits++;
  const memLevel = Math.max(1, Math.min(8, windowBits - 7));
  return zlib.deflateSync(data, { level: 9, windowBits, memLevel, chunkSize: Math.max(64, Math.min(16 * 1024, data.length + 64)) });
}
