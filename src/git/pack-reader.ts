// Packed objects: a reader for `objects/pack/*.pack` through their version-2 `.idx`, enough for
// what `git gc` and `git repack` write: whole objects and offset/ref deltas. Each object read is
// re-hashed against its id until a pack has served an eighth of its size that way; then a pack up
// to 32 MB is checked once, streamed through, against its and its index's SHA-1 trailers, and read
// object by object from its file and trusted. A few reads of a big clone's pack (a fresh clone's
// first checkpoint reads HEAD's commit and root tree) so never pay for hashing all of it.
// No pack is held in memory but the small ones this process wrote. Anything it cannot read (an old
// v1 index, which git has not written since 1.5.2, a base in another pack, damage) makes it return
// undefined, and the caller says the object is missing (ObjectStore.read). Packs are immutable,
// so what was read and checked stays valid (a read after the check reads the same bytes); a pack
// removed by a repack only makes a later read rescan the directory.
// It is the store's one read path: docs/architecture.md has the measurement against a long-lived
// `git cat-file --batch` and isomorphic-git's readObject.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectTooLargeError } from '../errors/index.js';
import { hashObject } from './git-object.js';
import {
  applyDelta,
  deltaSizes,
  indexCount,
  INDEX_IDS,
  indexOffset,
  indexPosition,
  inflateSized,
  isIndexV2,
  OFS_DELTA,
  parseEntryHeader,
  REF_DELTA,
} from './pack-format.js';

interface Pack {
  /** This reader's number for it: the base cache's keys are made of it and an offset. */
  n: number;
  path: string;
  size: number;
  /** The .idx file: fan-out table, sorted ids, CRCs, offsets, large offsets. */
  idx: Buffer;
  count: number;
  /** The whole .pack, for a pack this process wrote (small: one append's); others are read object by object. */
  data?: Buffer;
  /**
   * The whole pack and its index were checked against their SHA-1 trailers (once, streamed through
   * after enough of it was read: see hashed), or written by this process: then the objects read
   * from it are not each hashed again.
   */
  verified?: boolean;
  /** Bytes of the objects read from it and hashed each against its id, before it was checked whole. */
  hashed?: number;
}

const PACK_TYPES = ['', 'commit', 'tree', 'blob', 'tag'] as const;
// pack-objects.c's try_delta: git never deltifies an object against a base over 32 times its size.
const BASE_RATIO = 32;

// An object (or a base on its way) over the read's limit, found inside objectAt.
class TooLarge extends Error {
  constructor(
    readonly type: string,
    readonly size: number,
  ) {
    super(`a ${type} of ${size} bytes`);
  }
}
// Packs up to this size are checked whole once (a journal's pack is a few MB); the objects of larger
// ones (a big repository's history) are each re-hashed.
const CHECKED_PACK_BYTES = 32 * 1024 * 1024;
// A pack is checked whole once the objects read from it, each hashed, add up to this share of its
// size: reading a pack all over (a replay) then costs at most an eighth more hashing than checking
// it at its first read did, and a few reads (a commit, a tree) cost only their own bytes.
const CHECK_AFTER_SHARE = 1 / 8;
// An object of a checked pack is read with one pread of this much from its offset (its header and,
// for most, all of its zlib stream), then a second one only when it is longer. `git gc` and the
// roll-ups order objects by type and id, not by step, so a replay reads a pack all over: larger
// windows are wasted. (Keeping whole packs instead held 21 MB for a 10,000-step journal for the
// life of the process; 13,400 preads cost the replay of those 10,000 steps some 60 ms.)
const READ_AHEAD_BYTES = 4096;
// Delta bases kept resolved, the least recently used dropped first, so a chain of deltas is not
// re-inflated for every object on it (on a gc'd 10,000-step journal, 4 MB cuts the inflates from
// 83,000 to 13,700, close to one per object).
const BASE_CACHE_BYTES = 4 * 1024 * 1024;
// A base's key: its pack's number times this, plus its offset (packs up to a terabyte).
const PACK_KEY = 2 ** 40;

/** Reads objects from a repository's packs (`objects/pack`), declining what it cannot read. */
export class PackReader {
  private readonly dir: string;
  private packs: Pack[] | undefined;
  private packNumber = 0;
  private readonly bases = new Recent<number, { type: number; body: Buffer }>(BASE_CACHE_BYTES, (base) => base.body.length);
  // Checked packs' open files, and the latest bytes read from one (see READ_AHEAD_BYTES).
  private readonly fds = new Map<Pack, number>();
  private readonly scratch = Buffer.allocUnsafeSlow(READ_AHEAD_BYTES);
  private last: { pack?: Pack; start: number; length: number; data: Buffer } = { start: 0, length: 0, data: this.scratch };
  // Whether the read under way met a pack that went away (see read).
  private packGone = false;

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * The object from the packs known so far, or (`rescan`) from the packs there are now. A rescan
   * that met a pack going away (another process's roll-up removing what it replaced, between the
   * directory's listing and the read) looks once more: the pack replacing it was on disk first.
   */
  read(oid: string, rescan: boolean, maxBytes?: number): { type: string; body: Buffer } | undefined {
    this.packGone = false;
    const found = this.readOnce(oid, rescan, maxBytes);
    return found ?? (rescan && this.packGone ? this.readOnce(oid, true, maxBytes) : undefined);
  }

  private readOnce(oid: string, rescan: boolean, maxBytes?: number): { type: string; body: Buffer } | undefined {
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
    if (rescan || !this.packs) this.packs = this.scan();
    const found = this.locate(Buffer.from(oid, 'hex'));
    if (!found) return undefined;
    try {
      const object = this.objectAt(found.pack, found.offset, 0, maxBytes);
      const type = PACK_TYPES[object.type];
      if (!type) return undefined;
      // A checked pack: each zlib stream carries its own checksum (inflate throws on damage), and
      // the bytes are those its trailer covers. Otherwise every object is hashed against its id.
      if (found.pack.verified) return { type, body: object.body };
      const good = hashObject(type, object.body) === oid;
      this.checkWholeWhenWorth(found.pack, object.body.length);
      return good ? { type, body: object.body } : undefined;
    } catch (error) {
      if (error instanceof TooLarge) throw new ObjectTooLargeError(oid, error.type, error.size, maxBytes!);
      this.packs = undefined; // removed by a repack, or damaged: look again next time
      this.packGone = true;
      this.closeFiles();
      return undefined;
    }
  }

  /**
   * Makes a pack this process has just written known without a rescan (first, since the newest
   * objects are the ones read next), its bytes kept in memory.
   */
  addWritten(path: string, pack: Buffer, idx: Buffer): void {
    if (!this.packs) return; // the first read scans the directory, and finds it there
    if (this.packs.some((known) => known.path === path)) return;
    this.packs.unshift({ n: this.packNumber++, path, size: pack.length, idx, count: indexCount(idx), data: pack, verified: true });
  }

  /** Whether a pack known so far (with `rescan`, a pack there is now), still on disk, holds `oid`. */
  holds(oid: string, rescan = false): boolean {
    if (rescan) this.packs = this.scan();
    const found = this.packs ? this.locate(Buffer.from(oid, 'hex')) : undefined;
    return found !== undefined && existsSync(found.pack.path);
  }

  /** Forgets packs that were removed (rolled up into another), so no read looks in them again. */
  forget(paths: Iterable<string>): void {
    const gone = new Set(paths);
    if (this.packs) this.packs = this.packs.filter((pack) => !gone.has(pack.path));
    this.closeFiles();
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
        if (!isIndexV2(idx)) continue; // version 2 only
        packs.push({ n: this.packNumber++, path, size: statSync(path).size, idx, count: indexCount(idx) });
      } catch {
        this.packGone = true; // a pack being written or removed right now: skip it
      }
    }
    return packs;
  }

  // Checks a pack up to CHECKED_PACK_BYTES whole once the objects hashed one by one reach
  // CHECK_AFTER_SHARE of it (a pack whose trailers do not hold stays hashed object by object).
  private checkWholeWhenWorth(pack: Pack, bytes: number): void {
    if (pack.verified !== undefined || pack.size > CHECKED_PACK_BYTES) return;
    pack.hashed = (pack.hashed ?? 0) + bytes;
    if (pack.hashed >= pack.size * CHECK_AFTER_SHARE) pack.verified = trailersHold(pack.path, pack.size, pack.idx);
  }

  private bytes(pack: Pack, start: number, length: number): Buffer {
    const end = Math.min(start + length, pack.size - 20); // the pack ends with a 20-byte checksum
    if (pack.data) return pack.data.subarray(start, end);
    const last = this.last;
    if (last.pack === pack && start >= last.start && end <= last.start + last.length)
      return last.data.subarray(start - last.start, end - last.start);
    const want = Math.min(Math.max(end - start, READ_AHEAD_BYTES), pack.size - 20 - start);
    const data = want <= this.scratch.length ? this.scratch : Buffer.allocUnsafeSlow(want);
    const read = readSync(this.fdOf(pack), data, 0, want, start);
    this.last = { pack, start, length: read, data };
    return data.subarray(0, Math.min(read, end - start));
  }

  // The pack's file, open until the event loop next turns (a batch of reads shares it; the reader
  // has no close of its own, so nothing stays open behind a reader that is dropped).
  private fdOf(pack: Pack): number {
    let fd = this.fds.get(pack);
    if (fd !== undefined) return fd;
    fd = openSync(pack.path, 'r');
    if (this.fds.size === 0) setImmediate(() => this.closeFiles()).unref();
    this.fds.set(pack, fd);
    return fd;
  }

  private closeFiles(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
    this.last = { length: 0, start: 0, data: this.scratch };
  }

  // The object at `offset`, its deltas applied; one met as a base (`depth` > 0) is kept for its
  // siblings. With `maxBytes`, an object larger than that is refused (TooLarge) from its header, or
  // for a delta from the size its own first bytes name, before its body or its base is read; a base
  // may be up to BASE_RATIO times larger, as git pairs no delta with a base larger than that.
  private objectAt(pack: Pack, offset: number, depth: number, maxBytes?: number): { type: number; body: Buffer } {
    const key = pack.n * PACK_KEY + offset;
    const cached = this.bases.get(key);
    if (cached) {
      if (maxBytes !== undefined && cached.body.length > maxBytes)
        throw new TooLarge(PACK_TYPES[cached.type] ?? 'object', cached.body.length);
      return cached;
    }
    if (depth > 10_000) throw new Error('delta chain too long');
    const { type, size, at, distance, baseId } = parseEntryHeader(this.bytes(pack, offset, 32));
    const delta = type === OFS_DELTA || type === REF_DELTA;
    if (!delta && !PACK_TYPES[type]) throw new Error(`unknown packed object type ${type}`);
    if (!delta && maxBytes !== undefined && size > maxBytes) throw new TooLarge(PACK_TYPES[type]!, size);
    // zlib's worst case is a little over the input size; inflate stops at the end of the stream.
    const data = inflateSized(this.bytes(pack, offset + at, size + (size >> 10) + 64), size);
    if (data.length !== size) throw new Error('packed object has the wrong size');
    let object: { type: number; body: Buffer } = { type, body: data };
    if (delta) {
      const made = deltaSizes(data).result;
      if (maxBytes !== undefined && made > maxBytes) throw new TooLarge('object', made);
      const baseOffset = baseId ? findOffset(pack, baseId) : offset - distance!;
      if (baseOffset === undefined) throw new Error('ref-delta base outside this pack');
      const base = this.objectAt(pack, baseOffset, depth + 1, maxBytes === undefined ? undefined : maxBytes * BASE_RATIO);
      object = { type: base.type, body: applyDelta(data, base.body) };
    }
    if (depth > 0) this.remember(key, object);
    return object;
  }

  private remember(key: number, object: { type: number; body: Buffer }): void {
    // A small body is a slice of an 8 KB pool slab (Buffer.allocUnsafe), which it would keep whole:
    // a kept one gets a buffer of its own (measured: 4 MB of bases held 13 MB of slabs).
    if (object.body.buffer.byteLength > object.body.length) {
      const own = Buffer.allocUnsafeSlow(object.body.length);
      object.body.copy(own);
      object = { type: object.type, body: own };
    }
    this.bases.set(key, object);
  }
}

/**
 * A map that keeps its most recently used entries, up to `limit` in all, each weighing
 * `weigh(value)` (1 unless told): the pack reader's delta bases (by bytes), history-deltas.ts's
 * recent bodies and commits (by count).
 */
export class Recent<K, V> {
  private readonly map = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly limit: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  /** Keeps `value`, dropping the least recently used past the limit. */
  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) this.total -= this.weigh(old);
    this.map.delete(key);
    this.map.set(key, value);
    this.total += this.weigh(value);
    for (const [oldest, dropped] of this.map) {
      if (this.total <= this.limit) break;
      this.map.delete(oldest);
      this.total -= this.weigh(dropped);
    }
  }
}

// The pack offset of the object `want` (20 bytes), when the pack holds it.
function findOffset(pack: Pack, want: Buffer): number | undefined {
  const position = indexPosition(pack.idx, want);
  return position === undefined ? undefined : indexOffset(pack.idx, pack.count, position);
}

// Whether a pack's SHA-1 trailer covers its bytes, its index's trailer covers the index, and the
// index names this pack's checksum: one pass over each, the pack streamed through a chunk at a time
// (measured: the 10,000-step journal's replay spent 100 ms hashing every object it read, where
// checking its 20 MB of packs takes 25 ms).
function trailersHold(path: string, size: number, idx: Buffer): boolean {
  if (size < 32 || idx.length < INDEX_IDS + 40) return false;
  const hash = createHash('sha1');
  const chunk = Buffer.allocUnsafeSlow(Math.min(size, 1024 * 1024));
  const trailer = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  try {
    for (let at = 0; at < size;) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, size - at), at);
      if (read === 0) return false; // shorter than it was
      const body = Math.max(0, Math.min(read, size - 20 - at)); // the part before the trailer
      hash.update(chunk.subarray(0, body));
      if (body < read) chunk.copy(trailer, at + body - (size - 20), body, read);
      at += read;
    }
  } finally {
    closeSync(fd);
  }
  if (!hash.digest().equals(trailer)) return false;
  if (!idx.subarray(idx.length - 40, idx.length - 20).equals(trailer)) return false;
  const [indexed, indexChecksum] = [idx.subarray(0, idx.length - 20), idx.subarray(idx.length - 20)];
  return createHash('sha1').update(indexed).digest().equals(indexChecksum);
}
