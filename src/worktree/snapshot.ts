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
import { FILE_MODE, TREE_MODE } from '../git/git-object.js';
import { pathViolation } from '../git/path-rules.js';
import { ObjectStore } from '../git/object-store.js';
import { buildOwnGit, findRepository, keepsGitDirInside, type Repository } from '../git/repository.js';
import { FileHasher } from './file-hasher.js';
import type { NameRecorder } from '../redact/names.js';
import { ObjectBatch } from '../git/object-batch.js';
import { GITLINK_MODE, parseIndexListing, parseStatus, STATUS_ARGS, type PathChange } from './git-listing.js';
import { changedSince, layerFiles, skippedUntracked, type Layers, type UntrackedFiles } from './layers.js';
import { buildTrees, updateTrees, type DirTree } from './tree-build.js';
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
  private trees: { indexSignature: string; layers: Layers; skipped: SkippedFile[]; dirs: Map<string, DirTree> } | undefined;
  private readonly hashEveryFile: boolean;
  // Checked-out submodules by path, each with its own snapshotter.
  private readonly submodules = new Map<string, WorktreeSnapshotter>();
  // The last snapshot, and (small working trees) the stats that prove it still holds (unchanged.ts).
  private last: { snapshot: Snapshot; witness: UnchangedWitness | undefined } | undefined;
  private small = true; // the last pass saw few files: the next asks for ignored paths, for a witness
  private readonly untrackedListingFrom: number;
  private listing: UntrackedListing | undefined; // many untracked files: listed by directory

  constructor(repo: Repository, objects: ObjectStore, options: SnapshotOptions = {}) {
    this.repo = repo;
    this.objects = objects;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.redactText = options.redactText ?? ((text) => text);
    this.recordName = options.recordName ?? ((name) => name);
    this.hashEveryFile = options.hashEveryFile ?? false;
    this.untrackedListingFrom = options.untrackedListingFrom ?? UNTRACKED_LISTING_FROM;
    this.hasher = new FileHasher(repo.root, this.maxFileBytes, this.redactText);
  }

  /** Records the working tree as it is now; writes only objects that are new. */
  snapshot(): Snapshot {
    if (this.last?.witness?.holds()) return this.last.snapshot;
    const index = this.readIndex();
    const skipped: SkippedFile[] = [];
    // No "already stored" list across snapshots: a gc may have pruned an unreferenced one since.
    const batch = new ObjectBatch(this.objects, new Set());
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
    for (const { path, state } of status.changes) put(path, state === 'deleted' ? undefined : this.hasher.hash(path, batch));
    // Thousands of untracked files are stat()ed together, on two threads (stat-pool.ts), and only
    // the ones whose stat moved are looked at: they stay a layer of their own (layers.ts).
    const untracked: UntrackedFiles = { paths: status.untracked, ...this.hasher.hashAll(status.untracked, batch) };
    const nested = new Map<string, Snapshot>(); // submodules: their working trees, as subtrees
    const nestedSkipped: SkippedFile[] = [];
    for (const path of index.gitlinks) {
      const snapshotter = this.submodule(path);
      if (!snapshotter) continue;
      const inner = snapshotter.snapshot();
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
    let tree: string;
    let dirs: Map<string, DirTree>;
    if (last) {
      const moved = changedSince(last.layers, layers);
      const updated = updateTrees(last.dirs, moved, moved.keys(), batch, this.recordName);
      tree = updated.root;
      dirs = last.dirs;
      batch.flush();
      // Only once the objects are stored: a cached tree is one that is on disk.
      for (const [dir, entry] of updated.dirs) {
        if (entry) dirs.set(dir, entry);
        else dirs.delete(dir);
      }
    } else {
      const built = buildTrees(layerFiles(layers), batch, this.recordName);
      tree = built.root;
      dirs = built.dirs;
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
  snapshotPaths(paths: readonly string[]): Snapshot {
    const last = this.trees;
    const lastSnapshot = this.last?.snapshot;
    if (!last || !lastSnapshot || this.hashEveryFile || paths.length === 0) return this.snapshot();
    if (this.submodules.size > 0) return this.snapshot(); // their files are the full pass's to gather
    const index = this.readIndex();
    if (index.signature !== last.indexSignature) return this.snapshot();
    if (paths.some((path) => pathViolation(path, FILE_MODE) !== undefined || index.gitlinks.some((link) => path === link || path.startsWith(`${link}/`)))) return this.snapshot();
    const batch = new ObjectBatch(this.objects, new Set());
    const changes = new Map(last.layers.changes);
    let untracked = last.layers.untracked;
    const moved = new Map<string, FileEntry | undefined>();
    for (const path of paths) {
      const hashed = this.hasher.hash(path, batch);
      if (hashed && 'reason' in hashed) return this.snapshot(); // too big: the full pass says so, as it always does
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
    const updated = updateTrees(last.dirs, moved, moved.keys(), batch, this.recordName);
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
  private changedPaths(index: { signature: string; entries: Map<string, FileEntry>; gitlinks: string[] }, startedAt: number): { changes: PathChange[]; untracked: readonly string[]; ignored?: Set<string> } {
    const { entries, gitlinks } = index;
    const witnessed = this.small && entries.size <= WITNESS_LIMIT && gitlinks.length === 0 && !this.hashEveryFile;
    let listed: { changes: PathChange[]; untracked: readonly string[]; ignored?: Set<string> };
    if (this.listing) listed = this.listing.list(index);
    else {
      const status = parseStatus(this.git([...STATUS_ARGS, '--untracked-files=all', '--ignored=matching']));
      listed = status;
      if (status.untracked.length >= this.untrackedListingFrom) {
        this.listing = new UntrackedListing({ ...this.repo, git: (args) => this.git(args) });
        this.listing.adopt(status.untracked, status.ignored, status.changes, startedAt, index);
      }
    }
    const { changes, untracked } = listed;
    if (this.hashEveryFile) {
      const seen = new Set(changes.map((change) => change.path));
      for (const [path, entry] of entries) if (!seen.has(path) && entry.mode !== GITLINK_MODE) changes.push({ path, state: 'changed' });
    }
    return { changes, untracked, ...(witnessed && listed.ignored ? { ignored: listed.ignored } : {}) };
  }

  private git(args: string[]): string {
    const git = buildOwnGit(args);
    return execFileSync('git', git.args, { cwd: this.repo.root, env: git.env, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}
