// Working-tree checkpoints: the files the agent can see (tracked, and untracked-but-not-ignored)
// recorded as a git tree, so a run carries its code as well as its steps. The cost follows what
// changed, not the size of the repository: git's own index (read, never written) gives the blob of
// every file that matches it, `git status` names the few that differ (with thousands of untracked
// files, git is asked again only about the directories that changed: untracked-listing.ts), and a
// stat cache spares re-reading files that were hashed before and have not changed since. Thousands of new objects
// at once (a first checkpoint over an unignored node_modules) go into one pack (git/object-batch.ts).
// A checked-out submodule is recorded as its working tree: a subtree at its path (not the gitlink
// git's index has), built the same way from the submodule's own index and status, its blobs stored
// in this repository, so an edit inside it is a change of the step like any other, `show` diffs it
// and a restore puts it back. A submodule that is not checked out keeps its gitlink.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_MODE, parseCommit, TREE_MODE } from '../git/git-object.js';
import { pathViolation } from '../git/path-rules.js';
import { ObjectStore } from '../git/object-store.js';
import { buildOwnGit, findRepository, keepsGitDirInside, type Repository } from '../git/repository.js';
import { hasRawBytes, pathFromBytes } from '../os/path-bytes.js';
import { FileHasher } from './file-hasher.js';
import type { NameRecorder } from '../redact/names.js';
import { WorktreeFilters } from './filters.js';
import { ObjectBatch } from '../git/object-batch.js';
import { GITLINK_MODE, parseIndexListing, parseStatus, STATUS_ARGS, type PathChange } from './git-listing.js';
import { changedSince, layerFiles, skippedUntracked, type Layers, type UntrackedFiles } from './layers.js';
import { buildTrees, StoredTrees, UnreadableTreeError, updateTrees, type DirTrees } from './tree-build.js';
import { UnchangedWitness, WITNESS_LIMIT } from './unchanged.js';
import { UNTRACKED_LISTING_FROM, UntrackedListing } from './untracked-listing.js';

/** A file left out of a checkpoint, and why (never silently). */
export interface SkippedFile {
  path: string;
  size: number;
  reason: string;
}

/** One checkpoint of a working tree. */
export interface Snapshot {
  /** The git tree of the working tree. */
  tree: string;
  /** Every file in it, submodules' files included: path -> mode and blob id (built on first use). */
  readonly files: Map<string, FileEntry>;
  skipped: SkippedFile[];
}

/** A file of a checkpoint: git's mode (100644, 100755, 120000; 40000 for a submodule's tree) and id. */
export interface FileEntry {
  mode: string;
  oid: string;
}
/** How a snapshotter treats big files, secrets and (submodules) the index's blobs. */
export interface SnapshotOptions {
  /** Files larger than this are left out, with a note (default 10 MB). */
  maxFileBytes?: number;
  /** Rewrites the text of files before they are stored (secret redaction). */
  redactText?: (text: string) => string;
  /** The name each file and directory is recorded under in the trees (a secret in it redacted: redact/names.ts). */
  recordName?: NameRecorder;
  /**
   * The index's blobs are not in `objects` (a submodule's: they are in its own repository), so
   * every file is hashed from the working tree (once; then the stat cache answers).
   */
  hashEveryFile?: boolean;
  /** From this many untracked files on, they are listed directory by directory (untracked-listing.ts). */
  untrackedListingFrom?: number;
}
/** How one checkpoint stores its objects. */
export interface CheckpointOptions {
  /** Leave a few new objects to the object store's next append, which carries them (ObjectStore.hold). */
  hold?: boolean;
}
/** Files larger than this are left out of a checkpoint, with a note. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Takes checkpoints of one working tree, keeping caches between them. */
export class WorktreeSnapshotter {
  private readonly repo: Repository;
  readonly objects: ObjectStore;
  private readonly maxFileBytes: number;
  private readonly redactText: (text: string) => string;
  /** The name a file or directory has in the checkpoint's trees, given its real one. */
  readonly recordName: NameRecorder;
  private readonly hasher: FileHasher;
  private index: { signature: string; entries: Map<string, FileEntry>; gitlinks: string[] } | undefined;
  // The last snapshot's trees by directory, the index they were built on, its files' layers, and
  // the untracked files it left out.
  private trees: { indexSignature: string; layers: Layers; skipped: SkippedFile[]; dirs: DirTrees } | undefined;
  private readonly hashEveryFile: boolean;
  // Checked-out submodules by path, each with its own snapshotter.
  private readonly submodules = new Map<string, WorktreeSnapshotter>();
  // The last snapshot, and (small working trees) the stats that prove it still holds (unchanged.ts).
  private last: { snapshot: Snapshot; witness: UnchangedWitness | undefined } | undefined;
  private small = true; // the last pass saw few files: the next asks for ignored paths, for a witness
  private readonly untrackedListingFrom: number;
  private listing: UntrackedListing | undefined; // many untracked files: listed by directory
  /** The repository's clean and smudge filters (a restore writes the smudged form). */
  readonly filters: WorktreeFilters;
  private untrackedFiltered: { of: readonly string[]; paths: Set<string> } | undefined; // the last untracked list's filtered files

  constructor(repo: Repository, objects: ObjectStore, options: SnapshotOptions = {}) {
    this.repo = repo;
    this.objects = objects;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.redactText = options.redactText ?? ((text) => text);
    this.recordName = options.recordName ?? ((name) => name);
    this.hashEveryFile = options.hashEveryFile ?? false;
    this.untrackedListingFrom = options.untrackedListingFrom ?? UNTRACKED_LISTING_FROM;
    this.hasher = new FileHasher(repo.root, this.maxFileBytes, this.redactText);
    this.filters = new WorktreeFilters(repo.root);
  }

  // Tells the hasher which of the files it may read git filters (one `git check-attr` for them,
  // the untracked list's answer kept while the list is the same); nothing where no driver is defined.
  private useFilters(changed: readonly string[], untracked: readonly string[]): void {
    if (!this.filters.any) return;
    if (this.untrackedFiltered?.of !== untracked) this.untrackedFiltered = { of: untracked, paths: this.filters.filtered(untracked) };
    const fromUntracked = this.untrackedFiltered.paths;
    const fromChanged = this.filters.filtered(changed);
    this.hasher.clean = { has: (path) => fromChanged.has(path) || fromUntracked.has(path), apply: (path, content) => this.filters.clean(path, content) };
  }

  /**
   * Records the working tree as it is now; writes only objects that are new. With `hold`, a few new
   * objects are left to the object store's next append, which carries them (ObjectStore.hold):
   * for a checkpoint that the next journal entry records.
   */
  snapshot(options: CheckpointOptions = {}): Snapshot {
    if (this.last?.witness?.holds()) return this.last.snapshot;
    const index = this.readIndex();
    const skipped: SkippedFile[] = [];
    // No "already stored" list across snapshots: a gc may have pruned an unreferenced one since.
    const batch = new ObjectBatch(this.objects, new Set(), options);
    const statusStartedAt = Date.now();
    this.hasher.prestat(); // the untracked files of last time, checked on the worker meanwhile
    const status = this.changedPaths(index, statusStartedAt);
    // Where the working tree differs from the index (the status changes): path -> its entry, or
    // undefined when the checkpoint has no such file. Every other file is as the index has it.
    const changes = new Map<string, FileEntry | undefined>();
    const put = (path: string, hashed: FileEntry | SkippedFile | undefined) => {
      if (hashed === undefined) changes.set(path, undefined);
      else if ('reason' in hashed) {
        // A tracked file keeps the version git's index has (the checkpoint must not lack it: a
        // restore deletes tracked files the checkpoint lacks, and a clean clone would lose it);
        // an untracked one is left out. Either way the entry names it.
        const tracked = this.hashEveryFile ? undefined : index.entries.get(path);
        changes.set(path, tracked);
        skipped.push(tracked ? { ...hashed, reason: `${hashed.reason}: the checkpoint keeps the version in git's index, not this one` } : hashed);
      } else changes.set(path, hashed);
    };
    this.useFilters(status.changes.filter((change) => change.state !== 'deleted').map((change) => change.path), status.untracked);
    for (const { path, state } of status.changes) put(path, state === 'deleted' ? undefined : this.hasher.hash(path, batch));
    // Thousands of untracked files are stat()ed together, on two threads (stat-pool.ts), and only
    // the ones whose stat moved are looked at: they stay a layer of their own (layers.ts).
    const untracked: UntrackedFiles = { paths: status.untracked, ...this.hasher.hashAll(status.untracked, batch) };
    const nested = new Map<string, Snapshot>(); // submodules: their working trees, as subtrees
    const nestedSkipped: SkippedFile[] = [];
    for (const path of index.gitlinks) {
      const snapshotter = this.submodule(path);
      if (!snapshotter) continue;
      const inner = snapshotter.snapshot(options);
      nested.set(path, inner);
      changes.set(path, { mode: TREE_MODE, oid: inner.tree });
      for (const file of inner.skipped) nestedSkipped.push({ ...file, path: `${path}/${file.path}` });
    }
    const layers: Layers = { index: index.entries, changes, untracked };
    // The full file list is built only when someone asks (restore does; a checkpoint does not):
    // copying 10,000 index entries for every checkpoint is time and garbage for nothing.
    let files: Map<string, FileEntry> | undefined;
    const allFiles = () => {
      if (!files) {
        files = layerFiles(layers);
        for (const [path, inner] of nested) {
          files.delete(path);
          for (const [file, entry] of inner.files) files.set(`${path}/${file}`, entry);
        }
      }
      return files;
    };
    // Rebuilding every tree costs as much as the repository is big (measured: 15-50 ms for 10,000
    // files, most of a checkpoint), so only the directories on the paths that differ from the last
    // snapshot are rebuilt: with the same index, those are among the status changes of then and
    // now, and the untracked files hashed again.
    const last = this.trees?.indexSignature === index.signature ? this.trees : undefined;
    const untrackedSkipped = skippedUntracked(untracked, this.trees && { untracked: this.trees.layers.untracked, skipped: this.trees.skipped });
    skipped.push(...untrackedSkipped, ...nestedSkipped);
    let tree: string | undefined;
    let dirs: DirTrees | undefined;
    const updated = last && unlessUnreadable(() => {
      const moved = changedSince(last.layers, layers);
      return updateTrees(last.dirs, moved, moved.keys(), batch, this.recordName);
    });
    if (last && updated) {
      tree = updated.root;
      dirs = last.dirs;
      batch.flush();
      // Only once the objects are stored: a cached tree is one that is on disk.
      for (const [dir, entry] of updated.dirs) {
        if (entry) dirs.set(dir, entry);
        else dirs.delete(dir);
      }
    } else {
      // A checkout that is HEAD's as it stands (a fresh clone, a clean working tree): HEAD's trees
      // are the checkpoint's, read from the repository only as later checkpoints rebuild them.
      const stored = !this.trees && status.changes.length === 0 ? this.headTrees(status.head, index, untracked.paths.length) : undefined;
      const built = stored ? undefined : buildTrees(layerFiles(layers), batch, this.recordName);
      tree = stored ? stored.get('')!.oid : built!.root;
      dirs = stored ?? built!.dirs;
      batch.flush();
    }
    this.trees = { indexSignature: index.signature, layers, skipped: untrackedSkipped, dirs };
    const snapshot: Snapshot = {
      tree,
      skipped,
      get files() {
        return allFiles();
      },
    };
    this.small = index.entries.size + status.changes.length + status.untracked.length <= WITNESS_LIMIT;
    const seen = () => new Set([...index.entries.keys(), ...status.changes.map((change) => change.path), ...status.untracked]);
    const witness = this.small && status.ignored && UnchangedWitness.record({ ...this.repo, files: seen(), ignored: status.ignored, statusStartedAt });
    this.last = { snapshot, witness: witness || undefined };
    return snapshot;
  }

  /**
   * The checkpoint after a step that changed only `paths` (an edit, a write: the tool knows the one
   * file it wrote): the last checkpoint with those paths hashed again, and only the trees on their
   * paths rebuilt, instead of a `git status` of the whole tree (a second a step on a 27,000-file
   * repository). Anything else that changed meanwhile is the next full checkpoint's to see (after a
   * command, or at a resume's drift check). Falls back to a full snapshot when there is no last one
   * to build on, git's index changed, a path is in a submodule, or a file is too big to record.
   */
  snapshotPaths(paths: readonly string[], options: CheckpointOptions = {}): Snapshot {
    const last = this.trees;
    const lastSnapshot = this.last?.snapshot;
    const full = () => this.snapshot(options);
    if (!last || !lastSnapshot || this.hashEveryFile || paths.length === 0) return full();
    if (this.submodules.size > 0) return full(); // their files are the full pass's to gather
    const index = this.readIndex();
    if (index.signature !== last.indexSignature) return full();
    if (paths.some((path) => hasRawBytes(path) || pathViolation(path, FILE_MODE) !== undefined || index.gitlinks.some((link) => path === link || path.startsWith(`${link}/`)))) return full();
    const batch = new ObjectBatch(this.objects, new Set(), options);
    this.useFilters(paths, this.untrackedFiltered?.of ?? []);
    const changes = new Map(last.layers.changes);
    let untracked = last.layers.untracked;
    const moved = new Map<string, FileEntry | undefined>();
    for (const path of paths) {
      const hashed = this.hasher.hash(path, batch);
      if (hashed && 'reason' in hashed) return full(); // too big: the full pass says so, as it always does
      const at = index.entries.has(path) ? -1 : untracked.paths.indexOf(path);
      if (at >= 0) {
        // An untracked file the last checkpoint had: its entry in that list, the list itself kept.
        const entries = [...untracked.entries];
        entries[at] = hashed;
        untracked = { ...untracked, entries, rehashed: [...(untracked.rehashed ?? []), at] };
      } else if (index.entries.has(path) || !this.ignored(path)) {
        changes.set(path, hashed);
      } else continue; // an ignored file: no checkpoint holds it
      moved.set(path, hashed);
    }
    if (moved.size === 0) return lastSnapshot;
    const updated = unlessUnreadable(() => updateTrees(last.dirs, moved, moved.keys(), batch, this.recordName));
    if (!updated) {
      this.trees = undefined; // a tree read back is not usable: the full pass builds them all
      return full();
    }
    batch.flush();
    for (const [dir, entry] of updated.dirs) {
      if (entry) last.dirs.set(dir, entry);
      else last.dirs.delete(dir);
    }
    const layers: Layers = { index: index.entries, changes, untracked };
    this.trees = { ...last, layers };
    let files: Map<string, FileEntry> | undefined;
    const snapshot: Snapshot = {
      tree: updated.root,
      skipped: lastSnapshot.skipped.filter((file) => !moved.has(file.path)),
      get files() {
        return (files ??= layerFiles(layers));
      },
    };
    this.last = { snapshot, witness: undefined }; // the witness vouched for the tree as it was
    return snapshot;
  }

  // HEAD's trees, when the working tree is HEAD's as git's index has it: `git status` named no
  // change (staged ones included) and no untracked file, and no submodule is recorded as its
  // working tree. undefined when HEAD's commit or root tree cannot be read here, or is not as git
  // would write it.
  private headTrees(head: string | undefined, index: { entries: ReadonlyMap<string, FileEntry>; gitlinks: string[] }, untracked: number): StoredTrees | undefined {
    if (!head || untracked > 0 || index.gitlinks.length > 0 || index.entries.size === 0 || this.hashEveryFile) return undefined;
    if (!this.namesAsTheyAre(index.entries.keys())) return undefined;
    const commit = this.objects.readNow(head, 'commit');
    if (!commit) return undefined;
    return unlessUnreadable(() => new StoredTrees(parseCommit(head, commit).tree, (oid) => this.objects.readNow(oid, 'tree')));
  }

  // HEAD's trees hold every name as it is: they are the checkpoint's only when no name of the index
  // would be recorded otherwise (a secret in it, redact/names.ts). One pass of the redactor over all
  // the paths at once (the name recorder is the same redactor's): a match across two names only
  // sends this checkpoint the long way, which redacts name by name.
  private namesAsTheyAre(paths: Iterable<string>): boolean {
    const all = [...paths].join('\n');
    return !all.includes('[REDACTED:') && this.redactText(all) === all;
  }

  // Whether git ignores the untracked file at `path` (a write into node_modules, say).
  private ignored(path: string): boolean {
    try {
      const git = buildOwnGit(['check-ignore', '-q', '--no-index', '--', path]);
      execFileSync('git', git.args, { cwd: this.repo.root, env: git.env, stdio: 'ignore' });
      return true;
    } catch (error) {
      if ((error as { status?: number }).status === 1) return false;
      throw error;
    }
  }

  /** The paths git tracks (the index, and the submodules' indexes), for restore: only those may go. */
  /** Every path git tracks (submodules' files included) with the blob git's index has for it. */
  trackedBlobs(): Map<string, string> {
    const index = this.readIndex();
    const blobs = new Map([...index.entries].map(([path, entry]) => [path, entry.oid]));
    for (const path of index.gitlinks) {
      const inner = this.submodule(path);
      if (!inner) continue;
      blobs.delete(path);
      for (const [file, oid] of inner.trackedBlobs()) blobs.set(`${path}/${file}`, oid);
    }
    return blobs;
  }

  trackedPaths(): Set<string> {
    const index = this.readIndex();
    const paths = new Set(index.entries.keys());
    for (const path of index.gitlinks) {
      const inner = this.submodule(path);
      if (!inner) continue;
      paths.delete(path);
      for (const file of inner.trackedPaths()) paths.add(`${path}/${file}`);
    }
    return paths;
  }

  // The snapshotter of the submodule checked out at `path`, or undefined when it is not.
  private submodule(path: string): WorktreeSnapshotter | undefined {
    const known = this.submodules.get(path);
    if (known) return known;
    const root = join(this.repo.root, path);
    if (!existsSync(join(root, '.git'))) return undefined;
    let repo: Repository;
    try {
      repo = findRepository(root);
    } catch {
      return undefined; // not a repository we can read: its gitlink stays
    }
    if (repo.root !== root) return undefined;
    // A git dir a command made (`git init` in a submodule that was not checked out) or pointed
    // elsewhere: its config is the command's, and git run in it would run its fsmonitor hook or
    // filters on the host. Its gitlink stays, as for a submodule that is not checked out.
    if (!keepsGitDirInside(repo, this.repo)) return undefined;
    const snapshotter = new WorktreeSnapshotter(repo, this.objects, {
      maxFileBytes: this.maxFileBytes,
      redactText: this.redactText,
      recordName: this.recordName,
      hashEveryFile: true,
      untrackedListingFrom: this.untrackedListingFrom,
    });
    this.submodules.set(path, snapshotter);
    return snapshotter;
  }

  // Index entries at stage 0 (path -> mode, blob), re-read only when the index file changed.
  private readIndex(): { signature: string; entries: Map<string, FileEntry>; gitlinks: string[] } {
    const indexPath = join(this.repo.gitdir, 'index');
    let signature = 'none';
    try {
      const stat = statSync(indexPath);
      signature = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // a repository with no index yet: nothing tracked
    }
    if (this.index?.signature === signature) return this.index;
    const { entries, gitlinks } = signature === 'none' ? { entries: new Map<string, FileEntry>(), gitlinks: [] } : parseIndexListing(this.git(['ls-files', '--stage', '-z']));
    this.index = { signature, entries, gitlinks };
    return this.index;
  }

  // Paths whose working-tree file differs from the index, unmerged ones, and untracked ones (with
  // hashEveryFile, every file of the index too); for a small tree, also the ignored ones (a witness).
  // Many untracked files are listed by directory from then on (untracked-listing.ts).
  private changedPaths(index: { signature: string; entries: Map<string, FileEntry>; gitlinks: string[] }, startedAt: number): { changes: PathChange[]; untracked: readonly string[]; ignored?: Set<string>; head?: string } {
    const { entries, gitlinks } = index;
    const witnessed = this.small && entries.size <= WITNESS_LIMIT && gitlinks.length === 0 && !this.hashEveryFile;
    let listed: { changes: PathChange[]; untracked: readonly string[]; ignored?: Set<string>; head?: string };
    if (this.listing) listed = this.listing.list(index);
    else {
      // The ignored paths are wanted only for a witness (a small tree) or for the untracked
      // listing to start from; asking git for them costs a fifth more than `git status` itself on
      // a big tree, so a big tree with few untracked files is scanned without (measured in
      // bench/scan.ts), and asked again, once, if it now has many.
      const ignoredArgs = (asked: boolean) => (asked ? ['--ignored=matching'] : []);
      // HEAD's commit only for a first build (headTrees); no ahead/behind count: it walks history.
      const branch = this.trees ? [] : ['--branch', '--no-ahead-behind'];
      let status = parseStatus(this.git([...STATUS_ARGS, ...branch, '--untracked-files=all', ...ignoredArgs(witnessed)]));
      if (status.untracked.length >= this.untrackedListingFrom) {
        if (!witnessed) {
          startedAt = Date.now();
          status = parseStatus(this.git([...STATUS_ARGS, '--untracked-files=all', '--ignored=matching']));
        }
        this.listing = new UntrackedListing({ ...this.repo, git: (args) => this.git(args) });
        this.listing.adopt(status.untracked, status.ignored, status.changes, startedAt, index);
      }
      listed = status;
    }
    const { changes, untracked } = listed;
    const head = listed.head;
    if (this.hashEveryFile) {
      const seen = new Set(changes.map((change) => change.path));
      for (const [path, entry] of entries) if (!seen.has(path) && entry.mode !== GITLINK_MODE) changes.push({ path, state: 'changed' });
    }
    return { changes, untracked, ...(head ? { head } : {}), ...(witnessed && listed.ignored ? { ignored: listed.ignored } : {}) };
  }

  // git's answer as bytes, decoded so that a name that is not UTF-8 keeps its bytes (os/path-bytes.ts).
  private git(args: string[]): string {
    const git = buildOwnGit(args);
    return pathFromBytes(execFileSync('git', git.args, { cwd: this.repo.root, env: git.env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] }));
  }
}

// What `read` gives, or undefined when a tree read back from the repository is not usable.
function unlessUnreadable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof UnreadableTreeError) return undefined;
    throw error;
  }
}
