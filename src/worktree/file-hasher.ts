// Hashing working-tree files into blobs, with a stat cache: a file whose stat is as it was when it
// was hashed (and was already older than a timestamp tick then) is not read again.
// Tested in test/worktree/untracked-listing.test.ts, test/worktree/edit-checkpoint.test.ts.
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { makeObject } from '../git/git-object.js';
import { fsPath } from '../os/path-bytes.js';
import type { ObjectBatch } from '../git/object-batch.js';
import type { FileEntry, SkippedFile } from './entries.js';
import { STAT_FIELDS, StatList, StatPool, type StatFields } from './stat-pool.js';
import { fsckRefusal } from './fsck-rules.js';

/** From this many files on, hashAll checks their stats on two threads. */
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

/** What hashAll gives: each path's entry, and which of them were looked at again. */
export interface HashedList {
  /**
   * Per path: its entry (a SkippedFile when too big; undefined when gone or a directory). A new
   * array at each call: the caller may keep it.
   */
  entries: ReadonlyArray<FileEntry | SkippedFile | undefined>;
  /** The indices whose entry may differ from the last call's (in order); undefined: any may. */
  rehashed: readonly number[] | undefined;
}

/** Hashes the files of one working tree (paths from its root), remembering each file's stat. */
export class FileHasher {
  private readonly root: string;
  private readonly maxFileBytes: number;
  private readonly redactText: (text: string) => string;
  // path -> the stat it had when hashed (compared as numbers: no string per file), and the entry.
  private readonly cache = new Map<string, Cached>();
  private pool: StatPool | undefined;
  // The last list hashAll checked on the pool: its stats as expected (StatList), and its entries.
  private listed: { of: readonly string[]; stats: StatList; entries: Array<FileEntry | SkippedFile | undefined> } | undefined;
  private begun = false; // a check of listed.stats is running (prestat)
  /** The paths git filters (filters.ts): read, they are stored in their clean form, as `git add` stores them. */
  clean: { has(path: string): boolean; apply(path: string, content: Buffer): Buffer } | undefined;

  constructor(root: string, maxFileBytes: number, redactText: (text: string) => string) {
    this.root = root;
    this.maxFileBytes = maxFileBytes;
    this.redactText = redactText;
  }

  /**
   * Starts checking the files of the last list hashAll had (the worker thread starts at once, while
   * this thread does other work, such as waiting for `git status`); the next hashAll finishes it.
   */
  prestat(): void {
    if (!this.listed || !this.pool || this.begun) return;
    this.listed.stats = this.listed.stats.resolvable(this.listed.of);
    this.pool.begin(this.listed.stats);
    this.begun = true;
  }

  /**
   * What hash gives for each of `paths`. From POOL_FROM paths on, once most are known, all of them
   * are lstat()ed at once on two threads and only the ones whose stat moved are looked at (an
   * unchanged file costs its lstat and five number comparisons on one of the threads); else each
   * is hashed. Pass the same array while the list holds.
   */
  hashAll(paths: readonly string[], out: ObjectBatch): HashedList {
    const last = this.listed;
    const reported = this.begun ? this.pool!.finish() : undefined;
    this.begun = false;
    if (last?.of === paths) {
      // The same list: only what the check reported is hashed again.
      if (!reported) last.stats = last.stats.resolvable(paths);
      const changed = reported ?? this.check(last.stats);
      const entries = last.entries.slice();
      for (const i of changed) entries[i] = this.rehash(last.stats, i, paths[i]!, out, last.stats.freshAt(i) ?? null);
      last.entries = entries;
      return { entries, rehashed: changed };
    }
    // Most of them must be known already: a first pass reads nearly every file anyway, and the
    // worker's own memory (a V8 isolate, ~20 MB) would only add to that pass's peak.
    if (paths.length < POOL_FROM || this.cache.size < paths.length / 2) {
      this.listed = undefined;
      return { entries: paths.map((path) => this.hash(path, out)), rehashed: undefined };
    }
    const stats = new StatList(paths, this.root);
    const entries = new Array<FileEntry | SkippedFile | undefined>(paths.length);
    this.listed = { of: paths, stats, entries };
    if (last && reported) {
      // A new list, the old one checked already: what the old one knows and found carries over.
      const moved = new Set(reported);
      const before = new Map<string, number>();
      for (let j = 0; j < last.of.length; j++) before.set(last.of[j]!, j);
      for (let i = 0; i < paths.length; i++) {
        const j = before.get(paths[i]!);
        if (j === undefined) entries[i] = this.rehash(stats, i, paths[i]!, out);
        else if (moved.has(j)) entries[i] = this.rehash(stats, i, paths[i]!, out, last.stats.freshAt(j) ?? null);
        else {
          entries[i] = last.entries[j];
          stats.known.set(last.stats.known.subarray(j * STAT_FIELDS, (j + 1) * STAT_FIELDS), i * STAT_FIELDS);
        }
      }
      return { entries, rehashed: undefined };
    }
    for (let i = 0; i < paths.length; i++) {
      const cached = this.cache.get(paths[i]!);
      if (cached && trusted(cached)) {
        stats.expect(i, cached.stat);
        entries[i] = cached.entry;
      }
    }
    for (const i of this.check(stats)) entries[i] = this.rehash(stats, i, paths[i]!, out, stats.freshAt(i) ?? null);
    return { entries, rehashed: undefined };
  }

  // The indices of `list` whose stat is not the one expected, checked on the pool now.
  private check(list: StatList): number[] {
    this.pool ??= new StatPool();
    this.pool.begin(list);
    return this.pool.finish();
  }

  // hash() for path `i` of a checked list, and what the list expects of it from now on.
  private rehash(
    list: StatList,
    i: number,
    path: string,
    out: ObjectBatch,
    known?: StatFields | null,
  ): FileEntry | SkippedFile | undefined {
    const entry = this.hash(path, out, known);
    const cached = this.cache.get(path);
    list.expect(i, cached && cached.entry === entry && trusted(cached) ? cached.stat : undefined);
    return entry;
  }

  /**
   * The entry of the file at `path`, its blob handed to `out` when it was read; a SkippedFile when
   * it is too big; undefined when it is gone or a directory (a nested repository: not ours).
   * `known` is its lstat from a check (null: there was none), else it is stat()ed here.
   */
  hash(path: string, out: ObjectBatch, known?: StatFields | null): FileEntry | SkippedFile | undefined {
    const full = fsPath(`${this.root}/${path}`); // git's paths are normalised: no join() needed; bytes for a name that is not UTF-8
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
    const refused = (stat.mode & TYPE_MASK) === SYMLINK ? fsckRefusal(path, { symlink: true }) : undefined;
    if (refused) {
      entry = { path, size: stat.size, reason: refused };
    } else if ((stat.mode & TYPE_MASK) === SYMLINK) {
      // A link's target is content like a file's: a secret in it is redacted like one.
      const target = readlinkSync(full, 'buffer');
      const text = target.toString('utf8');
      const redacted = this.redactText(text);
      const blob = makeObject('blob', redacted === text ? target : Buffer.from(redacted));
      out.push(blob);
      entry = { mode: '120000', oid: blob.oid };
    } else if (stat.size > this.maxFileBytes) {
      entry = { path, size: stat.size, reason: `larger than ${Math.round(this.maxFileBytes / 1024 / 1024)} MB` };
    } else {
      let content: Buffer = readFileSync(full);
      if (this.clean?.has(path)) content = this.clean.apply(path, content);
      // The bytes as they are unless redaction changed the text (no copy; non-UTF-8 text kept as is).
      const text = content.subarray(0, 8000).includes(0) ? undefined : content.toString('utf8');
      const redacted = text === undefined ? undefined : this.redactText(text);
      if (redacted !== text) content = Buffer.from(redacted!);
      const unpushable = fsckRefusal(path, { content });
      if (unpushable) entry = { path, size: stat.size, reason: unpushable };
      else {
        const blob = makeObject('blob', content);
        out.push(blob);
        entry = { mode: stat.mode & 0o111 ? '100755' : '100644', oid: blob.oid };
      }
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

const sameStat = (a: StatKey, b: StatKey): boolean =>
  a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size && a.ino === b.ino && a.mode === b.mode;
