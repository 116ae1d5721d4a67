// The pieces of git's pack format the journal's writers and readers share: an entry's header, the
// version-2 index (written, and its header, count and offsets read), deltas applied, an entry's
// zlib stream inflated. Pure code, for the pack writer (pack-file.ts), the pack reader, the
// roll-ups and the history deltas.
// Tested in test/git/pack-reader.test.ts, test/git/history-deltas.test.ts.
import { createHash } from 'node:crypto';
import { constants, Inflate, inflateSync } from 'node:zlib';

/** Where a version-2 index's object ids start: after its magic, version and 256 fan-out counts. */
export const INDEX_IDS = 8 + 1024;

/** Whether `idx` starts as a version-2 pack index ("\377tOc", version 2, a whole fan-out table). */
export function isIndexV2(idx: Buffer): boolean {
  return idx.length >= INDEX_IDS && idx.readUInt32BE(0) === 0xff744f63 && idx.readUInt32BE(4) === 2;
}

/** How many objects a version-2 index lists (the last fan-out count). */
export function indexCount(idx: Buffer): number {
  return idx.readUInt32BE(8 + 255 * 4);
}

/** The pack offset of the `i`-th object of a version-2 index listing `count`, large offsets included. */
export function indexOffset(idx: Buffer, count: number, i: number): number {
  const offset = idx.readUInt32BE(INDEX_IDS + count * 24 + i * 4);
  if (!(offset & 0x80000000)) return offset;
  const large = INDEX_IDS + count * 28 + (offset & 0x7fffffff) * 8;
  return idx.readUInt32BE(large) * 2 ** 32 + idx.readUInt32BE(large + 4);
}

/** The object ids a version-2 pack index lists, in its order. */
export function indexIds(idx: Buffer): string[] {
  const count = indexCount(idx);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(idx.toString('hex', INDEX_IDS + i * 20, INDEX_IDS + i * 20 + 20));
  return ids;
}

/**
 * Where a version-2 index lists the object `want` (its 20-byte id), or undefined: a binary search
 * of the sorted ids within the fan-out range of its first byte, comparing the first four bytes
 * before the whole id.
 */
export function indexPosition(idx: Buffer, want: Buffer): number | undefined {
  const first = want[0]!;
  const prefix = want.readUInt32BE(0);
  let low = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
  let high = idx.readUInt32BE(8 + first * 4);
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = INDEX_IDS + middle * 20;
    const head = idx.readUInt32BE(at);
    const order = head !== prefix ? (head < prefix ? -1 : 1) : idx.compare(want, 0, 20, at, at + 20);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return undefined;
}

/** The type-and-size header of a pack entry: 3 bits of type, then the size, 7 bits a byte. */
export function entryHeader(type: number, size: number): Buffer {
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

/** A pack entry's header as read: its type, its size, where its data starts, and a delta's base. */
export interface PackedHeader {
  type: number;
  size: number;
  /** Bytes of header: the entry's zlib stream starts here. */
  at: number;
  /** An offset delta's base: this many bytes before the entry. */
  distance?: number;
  /** A ref delta's base: its id (20 bytes). */
  baseId?: Buffer;
}

/** Reads the header at the start of `head` (at least 32 bytes of the entry, or all there are): see entryHeader. */
export function parseEntryHeader(head: Buffer): PackedHeader {
  let at = 0;
  let byte = head[at++]!;
  const type = (byte >> 4) & 7;
  let size = byte & 15;
  for (let shift = 4; byte & 0x80; shift += 7) {
    byte = head[at++]!;
    size += (byte & 0x7f) * 2 ** shift;
  }
  if (type === OFS_DELTA) {
    byte = head[at++]!;
    let distance = byte & 0x7f;
    while (byte & 0x80) {
      byte = head[at++]!;
      distance = (distance + 1) * 128 + (byte & 0x7f);
    }
    return { type, size, at, distance };
  }
  // The base's id copied: `head` may be a reused buffer.
  if (type === REF_DELTA) return { type, size, at: at + 20, baseId: Buffer.from(head.subarray(at, at + 20)) };
  return { type, size, at };
}

/** The pack entry types of deltas: against an earlier offset, against an object id. */
export const OFS_DELTA = 6;
export const REF_DELTA = 7;

/**
 * A version-2 pack index of `entries` (each object's id, its entry's offset and CRC-32): fan-out,
 * sorted ids, CRC-32s, offsets (large ones in a second table), the pack's checksum and its own.
 */
export function buildIndex(entries: Array<{ oid: Buffer; offset: number; crc: number }>, packChecksum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.oid, b.oid));
  const large = sorted.filter((e) => e.offset >= 0x80000000);
  const n = sorted.length;
  const out = Buffer.alloc(INDEX_IDS + n * 28 + large.length * 8 + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const e of sorted) fanout[e.oid[0]!]!++;
  let running = 0;
  for (let i = 0; i < 256; i++) out.writeUInt32BE((running += fanout[i]!), 8 + i * 4);
  let at = INDEX_IDS;
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

// Git's pack delta format, applied (see pack-reader.ts). No closure inside these (the bundle names
// every function it makes, a cost per call on the read path).

/** A delta's two sizes (its base's, the object's it makes) and where its instructions start; throws when they are cut short. */
export function deltaSizes(delta: Buffer): { base: number; result: number; at: number } {
  let at = 0;
  const sizes = [0, 0];
  for (let i = 0; i < 2; i++) {
    for (let shift = 0; ; shift += 7) {
      if (at >= delta.length) throw new Error('the delta header is cut short');
      const byte = delta[at++]!;
      sizes[i]! += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) break;
    }
  }
  return { base: sizes[0]!, result: sizes[1]!, at };
}

/** The object a delta makes of `base`: the base size, the result size, then copy-from-base and insert instructions. */
export function applyDelta(delta: Buffer, base: Buffer): Buffer {
  const sizes = deltaSizes(delta);
  if (sizes.base !== base.length) throw new Error('delta base has the wrong size');
  const out = Buffer.allocUnsafe(sizes.result);
  let at = sizes.at;
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
      if (length < 128)
        for (let i = 0; i < length; i++) out[written + i] = base[offset + i]!; // Buffer.copy costs more
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

// What inflateSized drives of a node zlib stream: the native handle inflateSync itself drives
// (node's zlib.js processChunkSync), and the array where it leaves the output space left over.
interface ZlibInternals {
  _handle: {
    reset(): void;
    writeSync(flush: number, input: Buffer, inOff: number, inLength: number, out: Buffer, outOff: number, outLength: number): void;
  } | null;
  _writeState: Uint32Array;
}
// The one inflate state reused, reset for each object; null when this node has not the internals.
let reusable: (Inflate & ZlibInternals) | null | undefined;

/**
 * The zlib stream `input` inflated, when it makes exactly `size` bytes (a pack entry's header says
 * its size); otherwise inflateSync's answer or its error (damage, a wrong size). node's inflateSync
 * builds a stream per call (a Transform, its listeners, a native handle) and tears it down: for
 * `log` of a 3,000-step run, 4,600 small objects, that cost a CLI process four times what the
 * inflating itself did (125-180 ms of CPU against 32 ms, cold, as a CLI runs). node has no public
 * way to reuse one synchronously, so one stream's handle is reset and driven as inflateSync drives
 * it; anything not as expected (a handle an error closed, the wrong size, another node without
 * these internals) goes to inflateSync, which gives the public answer.
 */
export function inflateSized(input: Buffer, size: number): Buffer {
  if (reusable === undefined) {
    const stream = new Inflate() as Inflate & Partial<ZlibInternals>;
    const usable = typeof stream._handle?.writeSync === 'function' && stream._writeState instanceof Uint32Array;
    reusable = usable ? (stream as Inflate & ZlibInternals) : null;
    // An error closes the handle (seen below) and is then emitted as well: it is inflateSync's to report.
    stream.on('error', () => {});
  }
  const handle = reusable?._handle;
  if (handle) {
    const out = Buffer.allocUnsafe(size + 1); // one byte over: a stream making more is seen
    handle.reset();
    handle.writeSync(constants.Z_FINISH, input, 0, input.length, out, 0, out.length);
    if (reusable!._handle === handle && out.length - reusable!._writeState[0]! === size) return out.subarray(0, size);
    if (reusable!._handle !== handle) reusable = undefined; // closed by an error: a new one next time
  }
  return inflateSync(input, { chunkSize: Math.max(64, size + 1) });
}
