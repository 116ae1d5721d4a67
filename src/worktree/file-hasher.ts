// Hashing working-tree files into blobs, with a stat cache: a file whose stat is as it was when it
// was hashed (and was already older than a timestamp tick then) is not read again.
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { makeObject } from '../journal/git-object.js';
import type { ObjectBatch } from './pack-writer.js';
import type { FileEntry, SkippedFile } from './snapshot.js';
import { STAT_FIELDS, statAt, StatPool, type StatFields } from './stat-pool.js';

/** From this many files on, statAll stats them on two threads. */
export const POOL_FROM = 4000;
const TYPE_MASK = 0o170000;
const DIRECTORY = 0o040000;
const SYMLINK = 0o120000;

// How long after its last change a file's stat is trusted to reveal the next change (a change in
// the same timestamp tick keeps the stat): sub-second timestamps (ext4, xfs, btrfs, apfs, ntfs) tick
// every few milliseconds; whole-second ones (FAT: 2 s; HFS+, ext3: 1 s) are given 2 s.
const FINE_TICK_MARGIN_MS = 100;
const COARSE_TICK_MARGIN_MS = 2000;

type StatKey = StatFields;

/** Hashes the files of one working tree (paths from its root), remembering each file's stat. */
export class FileHasher {
  private readonly root: string;
  private readonly maxFileBytes: number;
  private readonly redactText: (text: string) => string;
  // path -> the stat it had when hashed (compared as numbers: no string per file), and the entry.
  private readonly cache = new Map<string, Cached>();
  private pool: StatPool | undefined;
  // The last list hashAll had: its full paths, and each one's cache record (no lookup per file).
  private listed: { of: readonly string[]; full: string[]; records: Array<Cached | undefined> } | undefined;

  constructor(root: string, maxFileBytes: number, redactText: (text: string) => string) {
    this.root = root;
    this.maxFileBytes = maxFileBytes;
    this.redactText = redactText;
  }

  /**
   * What hash gives for each of `paths`, with all of them stat()ed at once on two threads (an
   * unchanged file costs its lstat and five number comparisons); undefined for fewer than
   * POOL_FROM paths, or mostly new ones: then hash each. Pass the same array while it holds.
   */
  hashAll(paths: readonly string[], out: ObjectBatch): Array<FileEntry | SkippedFile | undefined> | undefined {
    // Most of them must be known already: a first pass reads nearly every file anyway, and the
    // worker's own memory (a V8 isolate, ~20 MB) would only add to that pass's peak.
    if (paths.length < POOL_FROM || this.cache.size < paths.length / 2) return undefined;
    if (this.listed?.of !== paths) this.listed = { of: paths, full: paths.map((path) => `${this.root}/${path}`), records: paths.map((path) => this.cache.get(path)) };
    const { full, records } = this.listed;
    this.pool ??= new StatPool();
    const stats = this.pool.statAll(full);
    const entries = new Array<FileEntry | SkippedFile | undefined>(paths.length);
    for (let i = 0; i < paths.length; i++) {
      const at = i * STAT_FIELDS;
      const mtimeMs = stats[at]!;
      if (Number.isNaN(mtimeMs)) continue; // gone
      const record = records[i];
      const stat = record?.stat;
      if (stat && stat.mtimeMs === mtimeMs && stat.ctimeMs === stats[at + 1] && stat.size === stats[at + 2] && stat.ino === stats[at + 3] && stat.mode === stats[at + 4] && trusted(record)) {
        entries[i] = record.entry;
        continue;
      }
      entries[i] = this.hash(paths[i]!, out, statAt(stats, i));
      records[i] = this.cache.get(paths[i]!);
    }
    return entries;
  }

  /**
   * The entry of the file at `path`, its blob handed to `out` when it was read; a SkippedFile when
   * it is too big; undefined when it is gone or a directory (a nested repository: not ours).
   * `known` is its lstat from statAll (null: there was none), else it is stat()ed here.
   */
  hash(path: string, out: ObjectBatch, known?: StatFields | null): FileEntry | SkippedFile | undefined {
    const full = `${this.root}/${path}`; // git's paths are normalised: no join() needed
    let stat: StatFields;
    if (known !== undefined) {
      if (known === null) return undefined;
      stat = known;
    } else {
      try {
        stat = lstatSync(full);
      } catch {
        return undefined; // gone between status and now
      }
    }
    if ((stat.mode & TYPE_MASK) === DIRECTORY) return undefined; // a nested repository or submodule: not ours to record
    const cached = this.cache.get(path);
    // A file changed again within the same timestamp tick as its last change keeps its stat, so a
    // cached hash is trusted only if the file was already older than a tick of its file system's
    // timestamps when it was read. (Measuring that from now instead, as before, trusted a hash
    // taken in the racy window once the window had passed.)
    if (cached && sameStat(cached.stat, stat) && trusted(cached)) return cached.entry;
    const key: StatKey = { mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, size: stat.size, ino: stat.ino, mode: stat.mode };
    const hashedAt = Date.now();
    let entry: FileEntry | SkippedFile;
    if ((stat.mode & TYPE_MASK) === SYMLINK) {
      const blob = makeObject('blob', Buffer.from(readlinkSync(full)));
      out.push(blob);
      entry = { mode: '120000', oid: blob.oid };
    } else if (stat.size > this.maxFileBytes) {
      entry = { path, size: stat.size, reason: `larger than ${Math.round(this.maxFileBytes / 1024 / 1024)} MB` };
    } else {
      let content = readFileSync(full);
      // The bytes as they are unless redaction changed the text (no copy; non-UTF-8 text kept as is).
      const text = content.subarray(0, 8000).includes(0) ? undefined : content.toString('utf8');
      const redacted = text === undefined ? undefined : this.redactText(text);
      if (redacted !== text) content = Buffer.from(redacted!);
      const blob = makeObject('blob', content);
      out.push(blob);
      entry = { mode: stat.mode & 0o111 ? '100755' : '100644', oid: blob.oid };
    }
    this.cache.set(path, { stat: key, entry, hashedAt });
    return entry;
  }
}

interface Cached {
  stat: StatKey;
  entry: FileEntry | SkippedFile;
  hashedAt: number;
}

// Whether a cached hash may answer for a file whose stat is still the one it had then.
function trusted(cached: Cached): boolean {
  const margin = cached.stat.mtimeMs % 1000 === 0 ? COARSE_TICK_MARGIN_MS : FINE_TICK_MARGIN_MS;
  return cached.hashedAt - cached.stat.mtimeMs > margin;
}

const sameStat = (a: StatKey, b: StatKey): boolean => a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size && a.ino === b.ino && a.mode === b.mode;
