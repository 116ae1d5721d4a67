// The loose-object store: writing objects crash-safely and reading them back, loose or packed.
// Each object is written whole (temp file, fsync, rename): isomorphic-git writes objects in place
// without fsync and never rewrites a torn one. isomorphic-git remains the reader of last resort,
// for anything our own readers decline.
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as nodeFs from 'node:fs';
import { dirname, join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { writeFileDurably, writeFileDurablyAsync } from './durable-file.js';
import { decodeLoose, encodeLoose, parseCommit, parseTree, type CommitInfo, type GitObject, type ObjectType, type Tree } from './git-object.js';
import { PackReader } from './pack-reader.js';

let tempCounter = 0;

/** The object database of one repository (its common git dir), with one read cache for the process. */
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

  /**
   * Stores objects durably; ones already present as non-empty loose files are skipped. A torn
   * (empty) file left by some other writer's crash is replaced, since rename overwrites it.
   */
  write(objects: Iterable<GitObject>): void {
    for (const { path, data, temp } of this.toStore(objects)) writeFileDurably(path, data, 0o444, temp);
  }

  /**
   * The same, with the objects' fsyncs in flight together (on the libuv thread pool) rather than
   * one after another: the file system commits them together, which takes a third off an append
   * on a quiet disk and more on a busy one (bench/journal.ts). Each object is still written whole
   * (temp file, fsync, rename), and all of them are on disk before this resolves, so the ref can
   * only ever point at objects that are.
   */
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
      // The temporary file is named the way git names its own (`tmp_obj_*`): one left by a kill -9
      // is then ignored by `git fsck` (any other name is reported as "bad sha1 file" for ever) and
      // removed by `git gc`/`git prune` like git's own leftovers.
      const temp = join(dirname(path), `tmp_obj_${process.pid}_${tempCounter++}`);
      out.push({ path, data: encodeLoose(object), temp });
    }
    return out;
  }

  /**
   * Reads an object's body. Loose objects are read directly (fast), and so are packed ones (after
   * `git gc`); isomorphic-git reads whatever the pack reader declines.
   */
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
    try {
      return decodeLoose(inflateSync(readFileSync(this.pathOf(oid))));
    } catch {
      return undefined;
    }
  }

  /** The entries of tree `oid`. */
  async readTree(oid: string): Promise<Tree> {
    return parseTree(await this.read(oid, 'tree'));
  }

  /** The tree a commit points at, its parents and its message. */
  async readCommit(oid: string): Promise<CommitInfo> {
    return parseCommit(oid, await this.read(oid, 'commit'));
  }
}
