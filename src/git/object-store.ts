// The object store: writing objects crash-safely and reading them back, loose or packed, through
// one path in this process (the pack reader and the loose files; a partial clone's left-out object
// fetched by git). Each object is written whole (temp file, fsync, rename), as git's own writer
// does with core.fsync; the loose format's reads are git-object.ts's.
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { asWriteFailure, MissingObjectError, ObjectTooLargeError } from '../errors/index.js';
import { DirectorySync, syncPath, writeFileDurably } from '../os/durable-file.js';
import {
  encodeLoose,
  hashObject,
  loosePath,
  MAX_COMMIT_BYTES,
  MAX_TREE_BYTES,
  parseCommit,
  parseTree,
  readLooseFile,
  type CommitInfo,
  type GitObject,
  type ObjectType,
  type Tree,
} from './git-object.js';
import { PackBuilder, writePackFiles } from './pack-file.js';
import { fetchLeftOut } from './partial-clone.js';
import { PackReader } from './pack-reader.js';
import { PackRollup } from './pack-rollup.js';

let tempCounter = 0;

// Past this many ids, the set of objects known good starts over (costing only re-checks).
const VERIFIED_LIMIT = 200_000;

/**
 * The object database of one repository (its common git dir). A run opens one and shares it (the
 * journal's appends and the working-tree checkpoints both write through it), because it holds what
 * the writers rely on: the objects known good, the directories that gained objects and are not yet
 * fsynced (an append fsyncs them all before its ref moves), and the one roll-up of small packs.
 */
export class ObjectStore {
  readonly gitdir: string;
  private readonly packs: PackReader;
  private readonly objectsDir: string;
  private readonly verified = new Set<string>();
  private readonly unsynced = new DirectorySync();
  /** Rolls the small packs of appends up into one, in the background (pack-rollup.ts). */
  readonly rollup: PackRollup;
  // Objects handed over with hold(): stored by the next writePacked or write, whichever comes first.
  private readonly held = new Map<string, GitObject>();

  constructor(gitdir: string) {
    this.gitdir = gitdir;
    this.objectsDir = join(gitdir, 'objects');
    this.packs = new PackReader(join(this.objectsDir, 'pack'));
    // Two stores of one repository in a process each have a roll-up: the roll-up lock lets one at a time work.
    this.rollup = new PackRollup(this.objectsDir);
    this.rollup.onRolled = ({ removed }) => this.packs.forget(removed);
  }

  /**
   * Stores objects: each file written whole and fsynced before this returns. An object whose loose
   * file exists already is kept when its content checks out (see checkExisting); a torn or damaged one (a
   * crash of a writer that does not fsync) is replaced, since rename overwrites it. The new names
   * are made durable (their directories fsynced) by the next writePacked or syncNames, all at once,
   * which every ref move here comes after: the checkpoint written before an append costs no
   * directory fsyncs of its own (one after another, they cost a disk flush each).
   */
  write(objects: Iterable<GitObject>): void {
    const seen = new Set<string>();
    for (const object of this.withHeld(objects)) {
      if (seen.has(object.oid)) continue;
      seen.add(object.oid);
      // Already in a pack (a fresh clone's trees, say): read and checked there (the pack's trailer,
      // or the object hashed against its id), it is not written again. git writes and fsyncs a
      // pack whole before it names it, so a pack on disk is one a power cut left whole.
      if (this.packs.read(object.oid, false)) continue;
      const path = loosePath(this.objectsDir, object.oid);
      const found = this.checkExisting(object.oid);
      if (found === 'trusted') continue;
      if (found === 'good') {
        // Checked good, but written by someone who may not have fsynced it.
        try {
          syncPath(path);
        } catch (error) {
          throw asWriteFailure(error, this.objectsDir);
        }
        this.unsynced.add(dirname(path));
      } else {
        // The temporary file is named the way git names its own (`tmp_obj_*`), in objects/ itself:
        // git ignores files there (`git fsck` and `git count-objects` look only in the fan-out
        // directories) and `git prune` removes old `tmp_*` ones, and one left by a kill -9 is found
        // by a single readdir (see leftovers.ts).
        const temp = join(this.objectsDir, `tmp_obj_${process.pid}_${tempCounter++}`);
        writeFileDurably(path, encodeLoose(object), { mode: 0o444, temp, dirs: this.unsynced });
        this.rollup.noteLoose([object.oid]);
      }
      if (this.verified.size > VERIFIED_LIMIT) this.verified.clear();
      this.verified.add(object.oid);
    }
    this.held.clear();
  }

  /**
   * Takes objects that only the next append will name (a step's working-tree checkpoint: its new
   * blobs and trees), to be stored with it: they go into that append's pack (writePacked), or are
   * written by the next write(), whichever comes first, and either way are on disk before any ref
   * or file names them. A checkpoint then costs no fsync of its own: the step's commit, durable
   * anyway, carries it. Until then read() finds them here; a crash loses only objects nothing names.
   */
  hold(objects: Iterable<GitObject>): void {
    for (const object of objects) if (!this.packs.read(object.oid, false)) this.held.set(object.oid, object);
  }

  // The objects held, then `objects`.
  private withHeld(objects: Iterable<GitObject>): Iterable<GitObject> {
    if (this.held.size === 0) return objects;
    return [...this.held.values(), ...objects];
  }

  /**
   * Stores objects durably as one small pack (pack-file.ts): two files, fsynced together, instead
   * of a file each, then the pack directory and every directory that gained objects through write()
   * fsynced, all before this resolves. Objects this process wrote or checked already are left out;
   * any other copy on disk is not trusted and not even looked at: the pack holds its own (git and
   * our reader both look in packs before loose files). Returns the pack's path, or undefined when
   * there was nothing to write.
   */
  async writePacked(objects: Iterable<GitObject>): Promise<string | undefined> {
    const builder = new PackBuilder();
    const torn: GitObject[] = [];
    const held = [...this.held.keys()];
    for (const object of this.withHeld(objects)) {
      // Trusted as stored only while still there (a rare case: an append's objects are new).
      if (this.verified.has(object.oid) && (this.packs.holds(object.oid) || this.checkExisting(object.oid) === 'trusted')) continue;
      const before = builder.count;
      builder.add(object);
      if (builder.count === before) continue;
      // A damaged loose copy (a writer that did not fsync, then a crash) would fail `git fsck`
      // though the pack's copy is good: it is replaced (rare; a stat when there is none).
      if (this.checkExisting(object.oid, true) === 'bad') torn.push(object);
    }
    if (torn.length) this.write(torn);
    if (builder.count === 0) {
      await this.syncNames();
      for (const oid of held) this.held.delete(oid);
      return undefined;
    }
    const built = builder.build();
    let path: string;
    try {
      path = await writePackFiles(join(this.objectsDir, 'pack'), built, this.unsynced);
    } catch (error) {
      throw asWriteFailure(error, this.objectsDir);
    }
    await this.syncNames();
    // Not remembered as verified: an append's objects are new (an entry, the trees on its path, a
    // commit) and never written again, and 10,000 steps' worth of ids would hold 6.5 MB.
    this.packs.addWritten(path, built.pack, built.idx);
    for (const oid of held) this.held.delete(oid); // on disk now, in the pack
    return path;
  }

  /** Makes the names of every object stored so far durable: call before moving a ref to them. */
  async syncNames(): Promise<void> {
    try {
      await this.unsynced.flush();
    } catch (error) {
      throw asWriteFailure(error, this.objectsDir);
    }
  }

  // Whether the loose file of `oid` can stand: 'trusted' when this process wrote or checked it
  // before (and it is not empty), 'good' once its content inflates to the right header and size
  // and hashes to its id; 'bad' (only when asked to tell it from 'missing'): a file is there, and
  // it is not the object.
  private checkExisting(oid: string, tellBad = false): 'missing' | 'trusted' | 'good' | 'bad' {
    const path = loosePath(this.objectsDir, oid);
    // No exception for a missing file (the usual case: an append's objects are new), which costs
    // an Error and its stack each time.
    let size: number | undefined;
    try {
      size = statSync(path, { throwIfNoEntry: false })?.size;
    } catch {
      // unreadable (EACCES...): as missing, the object is written
    }
    if (size === undefined) return 'missing';
    const bad = tellBad ? 'bad' : 'missing';
    if (size === 0) return bad;
    if (this.verified.has(oid)) return 'trusted';
    const found = readLooseFile(oid, path);
    return found && hashObject(found.type, found.body) === oid ? 'good' : bad;
  }

  /**
   * An object's body when this process can read it at once (held, packed or loose; a pack that
   * appeared since is looked for too), else undefined: for callers that cannot wait.
   */
  readNow(oid: string, expected: ObjectType): Buffer | undefined {
    const found = this.find(oid);
    return found?.type === expected ? found.body : undefined;
  }

  // Held, then the packs already seen (no system call), the loose file, and packs that appeared
  // since: a missing loose file costs an exception, ~10 µs an object.
  private find(oid: string, maxBytes?: number): { type: string; body: Buffer } | undefined {
    const held = this.held.get(oid);
    if (held) return { type: held.type, body: held.body };
    return (
      this.packs.read(oid, false, maxBytes) ??
      readLooseFile(oid, loosePath(this.objectsDir, oid), maxBytes) ??
      this.packs.read(oid, true, maxBytes)
    );
  }

  /**
   * Reads an object's body: held by this process, packed (the packs seen so far, then packs that
   * appeared since: a roll-up, a gc, a fetch) or loose, all in this process (pack-reader.ts,
   * git-object.ts): the one read path (docs/architecture.md says why). With `maxBytes`, its size is
   * read from its header first, and an object larger than that is refused (ObjectTooLargeError)
   * before any of its body is read. An object that is not here is fetched by git when the
   * repository is a partial clone (as git itself would, on first read); otherwise, and when that
   * fails, it is MissingObjectError.
   */
  async read(oid: string, expected: ObjectType, maxBytes?: number): Promise<Buffer> {
    const found = this.find(oid, maxBytes);
    if (found) {
      if (found.type !== expected) throw new Error(`object ${oid} is a ${found.type}, expected a ${expected}`);
      return found.body;
    }
    const fetched = fetchLeftOut(this.gitdir, oid, expected);
    if (fetched && maxBytes !== undefined && fetched.length > maxBytes)
      throw new ObjectTooLargeError(oid, expected, fetched.length, maxBytes);
    if (fetched) return fetched;
    throw new MissingObjectError(oid, expected, this.gitdir);
  }

  /** Whether a pack holds `oid`: one known so far, or (`rescan`) one there is now. */
  isPacked(oid: string, rescan = false): boolean {
    return this.packs.holds(oid, rescan);
  }

  /** The entries of tree `oid` (one larger than MAX_TREE_BYTES is refused unread). */
  async readTree(oid: string): Promise<Tree> {
    return parseTree(await this.read(oid, 'tree', MAX_TREE_BYTES));
  }

  /** The tree a commit points at, its parents and its message (one larger than MAX_COMMIT_BYTES is refused unread). */
  async readCommit(oid: string): Promise<CommitInfo> {
    return parseCommit(oid, await this.read(oid, 'commit', MAX_COMMIT_BYTES));
  }
}
