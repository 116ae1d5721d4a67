// Working-tree checkpoints: the files the agent can see (tracked, and untracked-but-not-ignored)
// recorded as a git tree, so a run carries its code as well as its steps. The cost follows what
// changed, not the size of the repository: git's own index (read, never written) gives the blob of
// every file that matches it, `git status` names the few that differ, and a stat cache spares
// re-reading files that were hashed before and have not changed since.
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { makeObject, makeTree, nestPaths, TREE_MODE, type GitObject, type PathDir, type Tree, type TreeEntry } from '../journal/git-object.js';
import type { ObjectStore } from '../journal/object-store.js';
import type { Repository } from '../journal/repository.js';

// A file left out of a checkpoint, and why (never silently).
export interface SkippedFile {
  path: string;
  size: number;
  reason: string;
}

export interface Snapshot {
  // The git tree of the working tree.
  tree: string;
  // Every file in it: path -> mode and blob id (built on first use).
  readonly files: Map<string, FileEntry>;
  skipped: SkippedFile[];
}

export interface FileEntry {
  mode: string;
  oid: string;
}

export interface SnapshotOptions {
  // Files larger than this are left out, with a note (default 10 MB).
  maxFileBytes?: number;
  // Rewrites the text of files before they are stored (secret redaction).
  redactText?: (text: string) => string;
}

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

// Reading git's index and status must not write the index: no optional locks, no refresh.
const GIT_ENV = { ...process.env, GIT_OPTIONAL_LOCKS: '0' };

// Takes checkpoints of one working tree, keeping caches between them.
export class WorktreeSnapshotter {
  private readonly repo: Repository;
  readonly objects: ObjectStore;
  private readonly maxFileBytes: number;
  private readonly redactText: (text: string) => string;
  // path -> the stat signature it had when hashed, and the resulting entry.
  private readonly statCache = new Map<string, { signature: string; entry: FileEntry | SkippedFile; hashedAt: number }>();
  private index: { signature: string; entries: Map<string, FileEntry> } | undefined;
  // The trees of the last snapshot by directory, the index they were built on, and where that
  // snapshot differed from the index.
  private trees: { indexSignature: string; changes: Map<string, FileEntry | undefined>; dirs: Map<string, DirTree> } | undefined;

  constructor(repo: Repository, objects: ObjectStore, options: SnapshotOptions = {}) {
    this.repo = repo;
    this.objects = objects;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.redactText = options.redactText ?? ((text) => text);
  }

  // Records the working tree as it is now; writes only objects that are new.
  snapshot(): Snapshot {
    const index = this.readIndex();
    const skipped: SkippedFile[] = [];
    const toWrite: GitObject[] = [];
    // Where the working tree differs from the index (the status changes): path -> its entry, or
    // undefined when the checkpoint has no such file. Every other file is as the index has it.
    const changes = new Map<string, FileEntry | undefined>();
    for (const { path, state } of this.changedPaths()) {
      if (state === 'deleted') {
        changes.set(path, undefined);
        continue;
      }
      const hashed = this.hashFile(path, toWrite);
      if (hashed === undefined) changes.set(path, undefined);
      else if ('reason' in hashed) {
        // A tracked file keeps the version git's index has (the checkpoint must not lack it: a
        // restore deletes tracked files the checkpoint lacks, and a clean clone would lose it);
        // an untracked one is left out. Either way the entry names it.
        const tracked = index.entries.get(path);
        changes.set(path, tracked);
        skipped.push(tracked ? { ...hashed, reason: `${hashed.reason}: the checkpoint keeps the version in git's index, not this one` } : hashed);
      } else changes.set(path, hashed);
    }
    const entryOf = (overlay: Map<string, FileEntry | undefined>, path: string) => (overlay.has(path) ? overlay.get(path) : index.entries.get(path));
    // The full file list is built only when someone asks (restore does; a checkpoint does not):
    // copying 10,000 index entries for every checkpoint is time and garbage for nothing.
    let files: Map<string, FileEntry> | undefined;
    const allFiles = () => {
      if (!files) {
        files = new Map(index.entries);
        for (const [path, entry] of changes) {
          if (entry) files.set(path, entry);
          else files.delete(path);
        }
      }
      return files;
    };
    // Rebuilding every tree costs as much as the repository is big (measured: 15-50 ms for 10,000
    // files, most of a checkpoint), so only the directories on the paths that differ from the last
    // snapshot are rebuilt: with the same index, those are among the status changes of then and now.
    const last = this.trees?.indexSignature === index.signature ? this.trees : undefined;
    let tree: string;
    let dirs: Map<string, DirTree>;
    if (last) {
      // Of those, only the ones whose entry really changed (a file edited long ago and untouched
      // since stays in every status, but its directory need not be rebuilt each time).
      const touched = new Set<string>();
      for (const path of [...last.changes.keys(), ...changes.keys()]) {
        const now = entryOf(changes, path);
        const then = entryOf(last.changes, path);
        if (now?.oid !== then?.oid || now?.mode !== then?.mode) touched.add(path);
      }
      const updated = updateTrees(last.dirs, { get: (path) => entryOf(changes, path) }, touched, toWrite);
      tree = updated.root;
      dirs = last.dirs;
      // No in-process "already stored" list: an object written before a model call may have been
      // pruned by a gc since (it was not yet referenced), so the store checks the disk each time.
      this.objects.write(toWrite);
      // Only once the objects are stored: a cached tree is one that is on disk.
      for (const [dir, entry] of updated.dirs) {
        if (entry) dirs.set(dir, entry);
        else dirs.delete(dir);
      }
    } else {
      const built = buildTrees(allFiles(), toWrite);
      tree = built.root;
      dirs = built.dirs;
      this.objects.write(toWrite);
    }
    this.trees = { indexSignature: index.signature, changes, dirs };
    return {
      tree,
      skipped,
      get files() {
        return allFiles();
      },
    };
  }

  // The paths git tracks (the index), for restore: only those may be deleted.
  trackedPaths(): Set<string> {
    return new Set(this.readIndex().entries.keys());
  }

  // Index entries at stage 0 (path -> mode, blob), re-read only when the index file changed.
  private readIndex(): { signature: string; entries: Map<string, FileEntry> } {
    const indexPath = join(this.repo.gitdir, 'index');
    let signature = 'none';
    try {
      const stat = statSync(indexPath);
      signature = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // a repository with no index yet: nothing tracked
    }
    if (this.index?.signature === signature) return this.index;
    const entries = new Map<string, FileEntry>();
    if (signature !== 'none') {
      for (const record of this.git(['ls-files', '--stage', '-z']).split('\0')) {
        const match = /^(\d{6}) ([0-9a-f]{40}) (\d)\t(.+)$/s.exec(record);
        if (match && match[3] === '0') entries.set(match[4]!, { mode: match[1]!, oid: match[2]! });
      }
    }
    this.index = { signature, entries };
    return this.index;
  }

  // Paths whose working-tree file differs from the index, unmerged ones, and untracked ones.
  private changedPaths(): Array<{ path: string; state: 'changed' | 'deleted' }> {
    const out = this.git(['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all']);
    const changes: Array<{ path: string; state: 'changed' | 'deleted' }> = [];
    for (const record of out.split('\0')) {
      if (record.startsWith('? ')) changes.push({ path: record.slice(2), state: 'changed' });
      else if (record.startsWith('1 ')) {
        const fields = record.split(' ');
        const [staged, worktree] = [fields[1]![0], fields[1]![1]];
        const path = fields.slice(8).join(' ');
        if (worktree === 'D') changes.push({ path, state: 'deleted' });
        // A staged file (`git add` after the last commit, by the agent too) is hashed from the
        // working tree like a modified one: its index blob was never redacted, and taking it as
        // is would put a secret written and staged by a command into the journal.
        else if (worktree !== '.' || staged !== '.') changes.push({ path, state: 'changed' });
      } else if (record.startsWith('u ')) {
        changes.push({ path: record.split(' ').slice(10).join(' '), state: 'changed' });
      }
    }
    return changes;
  }

  private hashFile(path: string, out: GitObject[]): FileEntry | SkippedFile | undefined {
    const full = join(this.repo.root, path);
    let stat: Stats;
    try {
      stat = lstatSync(full);
    } catch {
      return undefined; // gone between status and now
    }
    if (stat.isDirectory()) return undefined; // a nested repository or submodule: not ours to record
    const signature = `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}:${stat.mode}`;
    const cached = this.statCache.get(path);
    // A file changed again within the same timestamp tick as its last change keeps its stat, so a
    // cached hash is trusted only if the file was already older than any timestamp granularity
    // (2 s: FAT; 1 s: HFS+, ext3) when it was read. (Measuring that from now instead, as before,
    // trusted a hash taken in the racy window once the window had passed.)
    if (cached?.signature === signature && cached.hashedAt - stat.mtimeMs > 2000) return cached.entry;
    const hashedAt = Date.now();
    let entry: FileEntry | SkippedFile;
    if (stat.isSymbolicLink()) {
      const blob = makeObject('blob', Buffer.from(readlinkSync(full)));
      out.push(blob);
      entry = { mode: '120000', oid: blob.oid };
    } else if (stat.size > this.maxFileBytes) {
      entry = { path, size: stat.size, reason: `larger than ${Math.round(this.maxFileBytes / 1024 / 1024)} MB` };
    } else {
      let content = readFileSync(full);
      if (!content.subarray(0, 8000).includes(0)) content = Buffer.from(this.redactText(content.toString('utf8')));
      const blob = makeObject('blob', content);
      out.push(blob);
      entry = { mode: stat.mode & 0o111 ? '100755' : '100644', oid: blob.oid };
    }
    this.statCache.set(path, { signature, entry, hashedAt });
    return entry;
  }

  private git(args: string[]): string {
    return execFileSync('git', args, { cwd: this.repo.root, env: GIT_ENV, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

// One directory's tree: its entries (files, and subdirectories as trees) and its id.
export interface DirTree {
  entries: Tree;
  oid: string;
}

// Builds the nested trees for a flat map of files, appending every tree object to `out`; gives the
// root tree and every directory's tree by path ('' is the root).
export function buildTrees(files: Map<string, FileEntry>, out: GitObject[]): { root: string; dirs: Map<string, DirTree> } {
  const root = nestPaths<TreeEntry>(files);
  const dirs = new Map<string, DirTree>();
  const write = (dir: PathDir<TreeEntry>, path: string): string => {
    for (const [name, sub] of dir.dirs) dir.files.set(name, { mode: TREE_MODE, oid: write(sub, path ? `${path}/${name}` : name) });
    const tree = makeTree(dir.files);
    out.push(tree);
    dirs.set(path, { entries: dir.files, oid: tree.oid });
    return tree.oid;
  };
  return { root: write(root, ''), dirs };
}

// Rebuilds only the directories on the paths of `touched` (and their parents up to the root), from
// the trees of the last snapshot (`base`, left unchanged). Returns the new root and, per rebuilt
// directory, its new tree (null: the directory is now empty, and gone).
export function updateTrees(
  base: ReadonlyMap<string, DirTree>,
  files: { get(path: string): FileEntry | undefined },
  touched: Iterable<string>,
  out: GitObject[],
): { root: string; dirs: Map<string, DirTree | null> } {
  const parentOf = (path: string) => {
    const slash = path.lastIndexOf('/');
    return slash < 0 ? '' : path.slice(0, slash);
  };
  const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  // Touched file names by directory, and the dirty subdirectories of each dirty directory.
  const names = new Map<string, string[]>();
  const children = new Map<string, string[]>();
  const dirty = new Set<string>(['']);
  for (const path of touched) {
    const dir = parentOf(path);
    const list = names.get(dir);
    if (list) list.push(nameOf(path));
    else names.set(dir, [nameOf(path)]);
    for (let d = dir; d !== '' && !dirty.has(d); d = parentOf(d)) {
      dirty.add(d);
      const parent = parentOf(d);
      const siblings = children.get(parent);
      if (siblings) siblings.push(d);
      else children.set(parent, [d]);
    }
  }
  const depth = (path: string) => (path === '' ? 0 : path.split('/').length);
  const updates = new Map<string, DirTree | null>();
  let root = '';
  // Deepest first, so each directory sees its subdirectories' new ids.
  for (const dir of [...dirty].sort((a, b) => depth(b) - depth(a))) {
    const entries: Tree = new Map(base.get(dir)?.entries);
    for (const name of names.get(dir) ?? []) {
      const entry = files.get(dir ? `${dir}/${name}` : name);
      if (entry) entries.set(name, entry);
      else if (entries.get(name)?.mode !== TREE_MODE) entries.delete(name);
    }
    for (const child of children.get(dir) ?? []) {
      const name = nameOf(child);
      const update = updates.get(child);
      if (update) entries.set(name, { mode: TREE_MODE, oid: update.oid });
      else if (entries.get(name)?.mode === TREE_MODE) entries.delete(name);
    }
    if (entries.size === 0 && dir !== '') {
      updates.set(dir, null);
      continue;
    }
    const tree = makeTree(entries);
    out.push(tree);
    updates.set(dir, { entries, oid: tree.oid });
    if (dir === '') root = tree.oid;
  }
  return { root, dirs: updates };
}
