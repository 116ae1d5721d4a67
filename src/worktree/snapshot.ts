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
// Its parts: what a checkpoint is made of (entries.ts), what git says of the working tree
// (index-status.ts), and the checkpoint after an edit of known paths (path-checkpoint.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TREE_MODE } from '../git/git-object.js';
import { ObjectStore } from '../git/object-store.js';
import { findRepository, keepsGitDirInside, type Repository } from '../git/repository.js';
import { FileHasher } from './file-hasher.js';
import type { NameRecorder } from '../redact/names.js';
import { WorktreeFilters } from './filters.js';
import { ObjectBatch } from '../git/object-batch.js';
import {
  DEFAULT_MAX_FILE_BYTES,
  type CheckpointOptions,
  type FileEntry,
  type SkippedFile,
  type Snapshot,
  type SnapshotOptions,
} from './entries.js';
import { headTrees, WorktreeStatus } from './index-status.js';
import { changedSince, layerFiles, skippedUntracked, type Layers, type UntrackedFiles } from './layers.js';
import { checkpointPaths, type BuiltTrees } from './path-checkpoint.js';
import { buildTrees, unlessUnreadable, updateTrees, type DirTrees } from './tree-build.js';
import { UnchangedWitness, WITNESS_LIMIT } from './unchanged.js';
import { UNTRACKED_LISTING_FROM } from './untracked-listing.js';

/** Takes checkpoints of one working tree, keeping caches between them. */
export class WorktreeSnapshotter {
  private readonly repo: Repository;
  readonly objects: ObjectStore;
  private readonly maxFileBytes: number;
  private readonly redactText: (text: string) => string;
  /** The name a file or directory has in the checkpoint's trees, given its real one. */
  readonly recordName: NameRecorder;
  private readonly hasher: FileHasher;
  // git's index and status, read through git (index-status.ts).
  private readonly status: WorktreeStatus;
  // The last snapshot's trees by directory, the index they were built on, its files' layers, and
  // the untracked files it left out.
  private trees: BuiltTrees | undefined;
  private readonly hashEveryFile: boolean;
  // Checked-out submodules by path, each with its own snapshotter.
  private readonly submodules = new Map<string, WorktreeSnapshotter>();
  // The last snapshot, and (small working trees) the stats that prove it still holds (unchanged.ts).
  private last: { snapshot: Snapshot; witness: UnchangedWitness | undefined } | undefined;
  private small = true; // the last pass saw few files: the next asks for ignored paths, for a witness
  private readonly untrackedListingFrom: number;
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
    this.status = new WorktreeStatus(repo, { hashEveryFile: this.hashEveryFile, untrackedListingFrom: this.untrackedListingFrom });
    this.hasher = new FileHasher(repo.root, this.maxFileBytes, this.redactText);
    this.filters = new WorktreeFilters(repo.root);
  }

  // Tells the hasher which of the files it may read git filters (one `git check-attr` for them,
  // the untracked list's answer kept while the list is the same); nothing where no driver is defined,
  // and no config read at all while there is no file to hash (a clean checkout's first checkpoint).
  private useFilters(changed: readonly string[], untracked: readonly string[]): void {
    if (changed.length === 0 && untracked.length === 0) return;
    if (!this.filters.any) return;
    if (this.untrackedFiltered?.of !== untracked) this.untrackedFiltered = { of: untracked, paths: this.filters.filtered(untracked) };
    const fromUntracked = this.untrackedFiltered.paths;
    const fromChanged = this.filters.filtered(changed);
    this.hasher.clean = {
      has: (path) => fromChanged.has(path) || fromUntracked.has(path),
      apply: (path, content) => this.filters.clean(path, content),
    };
  }

  /**
   * Records the working tree as it is now; writes only objects that are new. With `hold`, a few new
   * objects are left to the object store's next append, which carries them (ObjectStore.hold):
   * for a checkpoint that the next journal entry records.
   */
  snapshot(options: CheckpointOptions = {}): Snapshot {
    if (this.last?.witness?.holds()) return this.last.snapshot;
    const index = this.status.readIndex();
    const skipped: SkippedFile[] = [];
    // No "already stored" list across snapshots: a gc may have pruned an unreferenced one since.
    const batch = new ObjectBatch(this.objects, options);
    const statusStartedAt = Date.now();
    this.hasher.prestat(); // the untracked files of last time, checked on the worker meanwhile
    const status = this.status.changedPaths(index, statusStartedAt, { small: this.small, first: !this.trees });
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
        skipped.push(
          tracked ? { ...hashed, reason: `${hashed.reason}: the checkpoint keeps the version in git's index, not this one` } : hashed,
        );
      } else changes.set(path, hashed);
    };
    this.useFilters(
      status.changes.filter((change) => change.state !== 'deleted').map((change) => change.path),
      status.untracked,
    );
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
    const untrackedSkipped = skippedUntracked(
      untracked,
      this.trees && { untracked: this.trees.layers.untracked, skipped: this.trees.skipped },
    );
    skipped.push(...untrackedSkipped, ...nestedSkipped);
    let tree: string | undefined;
    let dirs: DirTrees | undefined;
    const updated =
      last &&
      unlessUnreadable(() => {
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
      const stored =
        !this.trees && status.changes.length === 0 && !this.hashEveryFile
          ? headTrees(this.objects, status.head, index, untracked.paths.length, this.redactText)
          : undefined;
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
    const witness =
      this.small && status.ignored && UnchangedWitness.record({ ...this.repo, files: seen(), ignored: status.ignored, statusStartedAt });
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
    const index = this.status.readIndex();
    const outcome = checkpointPaths(
      {
        last,
        lastSnapshot,
        index,
        objects: this.objects,
        hasher: this.hasher,
        recordName: this.recordName,
        useFilters: (changed) => this.useFilters(changed, this.untrackedFiltered?.of ?? []),
        ignored: (path) => this.status.ignored(path),
      },
      paths,
      options,
    );
    if (outcome === 'unchanged') return lastSnapshot;
    if (outcome === 'unreadable') this.trees = undefined; // a tree read back is not usable: the full pass builds them all
    if (typeof outcome === 'string') return full();
    this.trees = outcome.trees;
    this.last = { snapshot: outcome.snapshot, witness: undefined }; // the witness vouched for the tree as it was
    return outcome.snapshot;
  }

  /** Every path git tracks (submodules' files included) with the blob git's index has for it. */
  trackedBlobs(): Map<string, string> {
    const index = this.status.readIndex();
    const blobs = new Map([...index.entries].map(([path, entry]) => [path, entry.oid]));
    for (const path of index.gitlinks) {
      const inner = this.submodule(path);
      if (!inner) continue;
      blobs.delete(path);
      for (const [file, oid] of inner.trackedBlobs()) blobs.set(`${path}/${file}`, oid);
    }
    return blobs;
  }

  /** The paths git tracks (the index, and the submodules' indexes), for restore: only those may go. */
  trackedPaths(): Set<string> {
    const index = this.status.readIndex();
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
}
