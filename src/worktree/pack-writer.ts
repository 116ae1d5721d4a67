// Storing many new objects at once (the first checkpoint of a working tree with thousands of files
// git does not have, such as an unignored node_modules) as one pack instead of one loose file
// each: 20,000 loose objects are 20,000 files, each created, fsynced and renamed (11 s, and the
// user's next commit would run `git gc --auto` over them); one pack is two files and two fsyncs.
// The pack is what `git gc` writes (version 2, with a version-2 .idx), undeltified; it is on disk
// (temp file, fsync, rename, directory fsync) before any tree naming its objects is handed out.
// Objects git already has, loose or packed, are left out, so a later run over the same files adds
// nothing. Few objects still go loose (ObjectStore.write): a pack per small checkpoint would pile
// up packs instead.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import type { GitObject } from '../journal/git-object.js';
import type { ObjectStore } from '../journal/object-store.js';

/** From this many new objects in one checkpoint on, they are written as one pack. */
export const PACK_THRESHOLD = 256;

const TYPE_CODES = { commit: 1, tree: 2, blob: 3 } as const;

/**
 * Collects the new objects of one checkpoint and stores them: loose when few, else as one pack.
 * `stored` holds the ids known to be on disk: those are skipped, and flush adds the new ones.
 */
export class ObjectBatch {
  private readonly store: ObjectStore;
  private readonly stored: Set<string>;
  private readonly added: string[] = [];
  private loose: GitObject[] = [];
  private pack: PackBuilder | undefined;
  private presence: ObjectPresence | undefined;

  constructor(store: ObjectStore, stored: Set<string>) {
    this.store = store;
    this.stored = stored;
  }

  /**
   * Adds an object to store. Past PACK_THRESHOLD objects, the ones git already has are dropped, and
   * once PACK_THRESHOLD really new ones are held they go into a pack (bodies dropped as they come).
   */
  push(object: GitObject): void {
    if (this.stored.has(object.oid)) return;
    this.added.push(object.oid);
    if (this.presence?.has(object.oid)) return;
    if (this.pack) return this.pack.add(object);
    this.loose.push(object);
    if (this.loose.length < PACK_THRESHOLD) return;
    if (!this.presence) {
      this.presence = new ObjectPresence(join(this.store.gitdir, 'objects'));
      this.loose = this.loose.filter((held) => !this.presence!.has(held.oid));
      if (this.loose.length < PACK_THRESHOLD) return;
    }
    this.pack = new PackBuilder();
    for (const held of this.loose) this.pack.add(held);
    this.loose = [];
  }

  /** Writes everything added, durably; returns how many objects went into a new pack (0: none). */
  flush(): number {
    const packed = this.pack?.count ?? 0;
    if (packed > 0) this.pack!.write(join(this.store.gitdir, 'objects', 'pack'));
    this.store.write(this.loose);
    this.loose = [];
    this.pack = undefined;
    for (const oid of this.added.splice(0)) this.stored.add(oid);
    return packed;
  }
}

/**
 * A pack being built in memory: each object deflated as it comes into one growing buffer (zlib's
 * output for a small object is a slice of a 16 KB chunk: kept as it is, 20,000 of them held 320 MB).
 */
export class PackBuilder {
  private data = Buffer.alloc(64 * 1024);
  private readonly entries: Array<{ oid: Buffer; offset: number; crc: number }> = [];
  private readonly seen = new Set<string>();
  private offset = 12;

  get count(): number {
    return this.entries.length;
  }

  add(object: GitObject): void {
    if (this.seen.has(object.oid)) return;
    this.seen.add(object.oid);
    const header = entryHeader(TYPE_CODES[object.type], object.body.length);
    // An output chunk about the size of the object: the default (16 KB for every object, however
    // small) is garbage that makes the process's memory balloon before a collection.
    const chunkSize = Math.max(64, Math.min(16 * 1024, object.body.length + 64));
    const deflated = zlib.deflateSync(object.body, { level: zlib.constants.Z_BEST_SPEED, chunkSize });
    const length = header.length + deflated.length;
    if (this.offset + length > this.data.length) {
      const grown = Buffer.alloc(Math.max(this.data.length * 2, this.offset + length));
      this.data.copy(grown, 0, 0, this.offset);
      this.data = grown;
    }
    header.copy(this.data, this.offset);
    deflated.copy(this.data, this.offset + header.length);
    this.entries.push({ oid: Buffer.from(object.oid, 'hex'), offset: this.offset, crc: crc32(deflated, crc32(header)) });
    this.offset += length;
  }

  /** Writes `pack-<id>.pack` and its `.idx` into `dir`, each durably; returns the pack's id. */
  write(dir: string): string {
    const pack = this.data.subarray(0, this.offset);
    pack.write('PACK', 0, 'latin1');
    pack.writeUInt32BE(2, 4);
    pack.writeUInt32BE(this.entries.length, 8);
    const checksum = createHash('sha1').update(pack).digest();
    const id = checksum.toString('hex');
    mkdirSync(dir, { recursive: true });
    // The pack before its index: git (and our reader) only look at packs that have an .idx.
    writeDurably(dir, `pack-${id}.pack`, [pack, checksum]);
    writeDurably(dir, `pack-${id}.idx`, [buildIndex(this.entries, checksum)]);
    fsyncDirectory(dir);
    return id;
  }
}

// The type-and-size header of a pack entry: 3 bits of type, then the size, 7 bits a byte.
function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  size = Math.floor(size / 16);
  while (size > 0) {
    bytes.push(byte | 0x80);
    byte = size & 0x7f;
    size = Math.floor(size / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

// A version-2 pack index: fan-out, sorted ids, CRC-32s, offsets (large ones in a second table),
// the pack's checksum and the index's own.
function buildIndex(entries: Array<{ oid: Buffer; offset: number; crc: number }>, packChecksum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.oid, b.oid));
  const large = sorted.filter((e) => e.offset >= 0x80000000);
  const n = sorted.length;
  const out = Buffer.alloc(8 + 1024 + n * 28 + large.length * 8 + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const e of sorted) fanout[e.oid[0]!]!++;
  let running = 0;
  for (let i = 0; i < 256; i++) out.writeUInt32BE((running += fanout[i]!), 8 + i * 4);
  let at = 8 + 1024;
  for (const e of sorted) at += e.oid.copy(out, at);
  for (const e of sorted) at = out.writeUInt32BE(e.crc >>> 0, at);
  let nextLarge = 0;
  const largeAt = at + n * 4;
  for (const e of sorted) {
    if (e.offset < 0x80000000) at = out.writeUInt32BE(e.offset, at);
    else {
      at = out.writeUInt32BE((0x80000000 | nextLarge) >>> 0, at);
      out.writeBigUInt64BE(BigInt(e.offset), largeAt + nextLarge++ * 8);
    }
  }
  at = largeAt + large.length * 8;
  at += packChecksum.copy(out, at);
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

let tempCounter = 0;

// Temp file (named like git's own, so a leftover is ignored by fsck and removed by gc), fsync, rename.
function writeDurably(dir: string, name: string, chunks: Buffer[]): void {
  const temp = join(dir, `tmp_pack_${process.pid}_${tempCounter++}`);
  const fd = openSync(temp, 'wx', 0o444);
  try {
    for (const chunk of chunks) writeSync(fd, chunk);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, join(dir, name));
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether git already has an object: a non-empty loose file, or an entry in a pack's index. */
export class ObjectPresence {
  private readonly objectsDir: string;
  private readonly indexes: Buffer[] = [];
  private readonly loose = new Map<string, Set<string>>();

  constructor(objectsDir: string) {
    this.objectsDir = objectsDir;
    const packDir = join(objectsDir, 'pack');
    let names: string[] = [];
    try {
      names = readdirSync(packDir).filter((name) => name.endsWith('.idx'));
    } catch {
      // no packs yet
    }
    for (const name of names) {
      try {
        const idx = readFileSync(join(packDir, name));
        if (idx.length >= 8 + 1024 && idx.readUInt32BE(0) === 0xff744f63 && idx.readUInt32BE(4) === 2) this.indexes.push(idx);
      } catch {
        // being removed by a repack: its objects are in the new pack, or loose
      }
    }
  }

  has(oid: string): boolean {
    if (this.looseNames(oid.slice(0, 2)).has(oid.slice(2))) {
      // A torn (empty) loose file left by a crash does not count: the object is written again.
      const stat = statSync(join(this.objectsDir, oid.slice(0, 2), oid.slice(2)), { throwIfNoEntry: false });
      if (stat && stat.size > 0) return true;
    }
    const want = Buffer.from(oid, 'hex');
    return this.indexes.some((idx) => inIndex(idx, want));
  }

  // The loose objects of one fan-out directory, listed once (one readdir, not a stat per object).
  private looseNames(prefix: string): Set<string> {
    let names = this.loose.get(prefix);
    if (!names) {
      try {
        names = new Set(readdirSync(join(this.objectsDir, prefix)));
      } catch {
        names = new Set();
      }
      this.loose.set(prefix, names);
    }
    return names;
  }
}

// Binary search of a version-2 index's sorted ids, within the fan-out range of the first byte.
function inIndex(idx: Buffer, want: Buffer): boolean {
  const first = want[0]!;
  let lo = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
  let hi = idx.readUInt32BE(8 + first * 4);
  const ids = 8 + 1024;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = Buffer.compare(idx.subarray(ids + mid * 20, ids + mid * 20 + 20), want);
    if (cmp === 0) return true;
    if (cmp < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

// CRC-32 (zlib's polynomial): node's own where it has one (20.15+), else a table.
const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32(data: Buffer, initial = 0): number {
  const native = (zlib as { crc32?: (data: Buffer, value?: number) => number }).crc32;
  if (native) return native(data, initial);
  let c = ~initial;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
