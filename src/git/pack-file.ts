// Writing packs as savepoint makes them: what `git gc` writes (a version-2 pack, with a version-2
// .idx), undeltified, each object deflated at zlib's fastest level: an append's objects
// (object-store.ts), a checkpoint's many new ones (object-batch.ts), small packs copied into one
// (pack-rollup.ts). docs/architecture.md has why a pack and not loose files; the format's pieces
// are in pack-format.ts.
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { DirectorySync } from '../os/durable-file.js';
import { abandonTemp, finishTemp, fsyncAsync, openTempAsync, unlinkQuietly, writeFileDurably, writeFully } from '../os/durable-file.js';
import { crc32 } from 'node:zlib';
import { deflateFast, type GitObject } from './git-object.js';
import { buildIndex, entryHeader, indexCount, indexOffset, INDEX_IDS, isIndexV2 } from './pack-format.js';

const TYPE_CODES = { commit: 1, tree: 2, blob: 3 } as const;
let tempCounter = 0;

/** A finished pack: its id (the pack's checksum, as git names packs), its bytes and its index. */
export interface BuiltPack {
  id: string;
  /** The whole .pack file, trailing checksum included. */
  pack: Buffer;
  /** The whole .idx file. */
  idx: Buffer;
  count: number;
}

/**
 * A pack being built in memory: each object deflated as it comes into one growing buffer (zlib's
 * output for a small object is a slice of a 16 KB chunk: kept as it is, 20,000 of them held 320 MB).
 */
export class PackBuilder {
  private data = Buffer.alloc(4 * 1024);
  private readonly entries: Array<{ oid: Buffer; offset: number; crc: number }> = [];
  private readonly seen = new Set<string>();
  private offset = 12;

  /** How many objects the pack holds so far. */
  get count(): number {
    return this.entries.length;
  }

  /** Adds an object (once: a second copy of the same id is ignored). */
  add(object: GitObject): void {
    if (this.seen.has(object.oid)) return;
    this.seen.add(object.oid);
    const header = entryHeader(TYPE_CODES[object.type], object.body.length);
    // An output chunk about the size of the object: the default (16 KB for every object, however
    // small) is garbage that makes the process's memory balloon before a collection.
    const chunkSize = Math.max(64, Math.min(16 * 1024, object.body.length + 64));
    const deflated = deflateFast(object.body, chunkSize);
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

  /** The finished pack and its index. */
  build(): BuiltPack {
    return assemblePack([this.data.subarray(12, this.offset)], this.entries);
  }
}

/**
 * One pack holding every object of `parts` (whole .pack and .idx files), made by copying each
 * pack's entries as they are: no object is inflated or deflated again, and a delta stays valid,
 * since a pack's entries keep their distances to one another. Undefined when a part is not a
 * sound version-2 pack (its checksum, its header's count) or when two parts share an object (a
 * pack's index may list an object once): the caller then leaves it to git.
 */
export function concatenatePacks(parts: Array<{ pack: Buffer; idx: Buffer }>): BuiltPack | undefined {
  const entries: Array<{ oid: Buffer; offset: number; crc: number }> = [];
  const seen = new Set<string>();
  const bodies: Buffer[] = [];
  let at = 12;
  for (const { pack, idx } of parts) {
    if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK' || pack.readUInt32BE(4) !== 2) return undefined;
    if (!isIndexV2(idx)) return undefined;
    const count = indexCount(idx);
    const [hashed, checksum] = [pack.subarray(0, pack.length - 20), pack.subarray(pack.length - 20)];
    if (pack.readUInt32BE(8) !== count || !createHash('sha1').update(hashed).digest().equals(checksum)) return undefined;
    const crcs = INDEX_IDS + count * 20;
    for (let i = 0; i < count; i++) {
      const oid = Buffer.from(idx.subarray(INDEX_IDS + i * 20, INDEX_IDS + i * 20 + 20));
      const key = oid.toString('hex');
      if (seen.has(key)) return undefined;
      seen.add(key);
      entries.push({ oid, offset: at + indexOffset(idx, count, i) - 12, crc: idx.readUInt32BE(crcs + i * 4) });
    }
    const body = pack.subarray(12, pack.length - 20);
    bodies.push(body);
    at += body.length;
  }
  return assemblePack(bodies, entries);
}

/**
 * A version-2 pack of `entries` whose bytes are `bodies` in order, after the 12-byte header (so
 * the first entry's offset is 12): the header, the trailing checksum and the index.
 */
export function assemblePack(bodies: Buffer[], entries: Array<{ oid: Buffer; offset: number; crc: number }>): BuiltPack {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const hash = createHash('sha1').update(header);
  for (const body of bodies) hash.update(body);
  const checksum = hash.digest();
  const pack = Buffer.concat([header, ...bodies, checksum]);
  return { id: checksum.toString('hex'), pack, idx: buildIndex(entries, checksum), count: entries.length };
}

/**
 * Puts a built pack into the pack directory `dir`: both files written to temp names (named like
 * git's, so a leftover is ignored by fsck and removed by gc, and carrying our pid for leftovers.ts),
 * fsynced together on the thread pool, then renamed, the pack before its index (git and our reader
 * only look at packs that have an .idx). The directory is noted in `dirs`; the caller flushes it
 * before anything refers to the pack's objects. Returns the .pack's path.
 */
export async function writePackFiles(dir: string, built: BuiltPack, dirs: DirectorySync): Promise<string> {
  const files = packFiles(dir, built);
  // Both created at once on the thread pool (their waits for the file system's journal overlap),
  // and both fsynced at once.
  const opening = await Promise.allSettled(files.map((file) => openTempAsync(file.temp, 0o444, dirs)));
  const opened = opening.flatMap((result, i) => (result.status === 'fulfilled' ? [{ fd: result.value, temp: files[i]!.temp }] : []));
  try {
    const failed = opening.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
    for (const [i, { fd }] of opened.entries()) writeFully(fd, files[i]!.data);
    await Promise.all(opened.map(({ fd }) => fsyncAsync(fd)));
  } catch (error) {
    for (const { fd, temp } of opened) abandonTemp(fd, temp);
    throw error;
  }
  try {
    for (const [i, file] of files.entries()) finishTemp(opened[i]!.fd, file.temp, file.path, dirs);
  } catch (error) {
    for (const file of files) unlinkQuietly(file.temp);
    throw error;
  }
  return files[0]!.path;
}

/**
 * The same files written on this thread, one after the other, each whole (temp file, fsync,
 * rename), the pack before its index: a checkpoint's first pack of thousands of new files, whose
 * two fsyncs are two among thousands of reads. A full disk is a DiskFullError. Returns the .pack's path.
 */
export function writePackFilesSync(dir: string, built: BuiltPack, dirs: DirectorySync): string {
  const files = packFiles(dir, built);
  for (const file of files) writeFileDurably(file.path, file.data, { mode: 0o444, temp: file.temp, dirs });
  return files[0]!.path;
}

// A pack's two files, .pack first, with their temp names. The temp files sit in objects/ itself,
// where git looks at no file (in objects/pack, `git count-objects` would count a killed writer's
// as garbage until leftovers.ts removed it).
function packFiles(dir: string, built: BuiltPack): Array<{ temp: string; path: string; data: Buffer }> {
  const temps = dirname(dir);
  return [
    { temp: join(temps, `tmp_pack_${process.pid}_${tempCounter++}`), path: join(dir, `pack-${built.id}.pack`), data: built.pack },
    { temp: join(temps, `tmp_idx_${process.pid}_${tempCounter++}`), path: join(dir, `pack-${built.id}.idx`), data: built.idx },
  ];
}
