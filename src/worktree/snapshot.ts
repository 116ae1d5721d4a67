// Working-tree checkpoints: the files the agent can see (tracked, and untracked-but-not-ignored)
// recorded as a git tree, so a run carries its code as well as its steps. The cost follows what
// changed, not the size of the repository: git's own index (read, never written) gives the blob of
// every file that matches it, `git status` names the few that differ, and a stat cache spares
// re-reading files that were hashed before and have not changed since.
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { makeObject, makeTree, TREE_MODE, type GitObject, type ObjectStore, type Tree } from '../journal/objects.js';
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
  // Every file in it: path -> mode and blob id.
  files: Map<string, FileEntry>;
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
  private readonly statCache = new Map<string, { signature: string; entry: FileEntry | SkippedFile }>();
  private index: { signature: string; entries: Map<string, FileEntry> } | undefined;
  // Objects known to be in the object store already (written or checked by us).
  private readonly stored = new Set<string>();

  constructor(repo: Repository, objects: ObjectStore, options: SnapshotOptions = {}) {
    this.repo = repo;
    this.objects = objects;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.redactText = options.redactText ?? ((text) => text);
  }

  // Records the working tree as it is now; writes only objects that are new.
  snapshot(): Snapshot {
    const files = new Map(this.readIndex());
    const skipped: SkippedFile[] = [];
    const toWrite: GitObject[] = [];
    for (const { path, state } of this.changedPaths()) {
      if (state === 'deleted') {
        files.delete(path);
        continue;
      }
      const hashed = this.hashFile(path, toWrite);
      if (hashed === undefined) files.delete(path);
      else if ('reason' in hashed) {
        files.delete(path);
        skipped.push(hashed);
      } else files.set(path, hashed);
    }
    const tree = buildTree(files, toWrite);
    this.objects.write(toWrite.filter((object) => !this.stored.has(object.oid)));
    for (const object of toWrite) this.stored.add(object.oid);
    return { tree, files, skipped };
  }

  // The paths git tracks (the index), for restore: only those may be deleted.
  trackedPaths(): Set<string> {
    return new Set(this.readIndex().keys());
  }

  // Index entries at stage 0 (path -> mode, blob), re-read only when the index file changed.
  private readIndex(): Map<string, FileEntry> {
    const indexPath = join(this.repo.gitdir, 'index');
    let signature = 'none';
    try {
      const stat = statSync(indexPath);
      signature = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // a repository with no index yet: nothing tracked
    }
    if (this.index?.signature === signature) return this.index.entries;
    const entries = new Map<string, FileEntry>();
    if (signature !== 'none') {
      for (const record of this.git(['ls-files', '--stage', '-z']).split('\0')) {
        const match = /^(\d{6}) ([0-9a-f]{40}) (\d)\t(.+)$/s.exec(record);
        if (match && match[3] === '0') entries.set(match[4]!, { mode: match[1]!, oid: match[2]! });
      }
    }
    this.index = { signature, entries };
    return entries;
  }

  // Paths whose working-tree file differs from the index, unmerged ones, and untracked ones.
  private changedPaths(): Array<{ path: string; state: 'changed' | 'deleted' }> {
    const out = this.git(['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all']);
    const changes: Array<{ path: string; state: 'changed' | 'deleted' }> = [];
    for (const record of out.split('\0')) {
      if (record.startsWith('? ')) changes.push({ path: record.slice(2), state: 'changed' });
      else if (record.startsWith('1 ')) {
        const fields = record.split(' ');
        const worktree = fields[1]![1];
        const path = fields.slice(8).join(' ');
        if (worktree === 'D') changes.push({ path, state: 'deleted' });
        else if (worktree !== '.') changes.push({ path, state: 'changed' });
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
    // A file changed within the same clock tick as its hashing could keep its stat: re-hash those.
    if (cached?.signature === signature && Date.now() - stat.mtimeMs > 2000) return cached.entry;
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
    this.statCache.set(path, { signature, entry });
    return entry;
  }

  private git(args: string[]): string {
    return execFileSync('git', args, { cwd: this.repo.root, env: GIT_ENV, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

// Builds the nested trees for a flat map of files, appending every tree object to `out`.
export function buildTree(files: Map<string, FileEntry>, out: GitObject[]): string {
  interface Dir {
    entries: Tree;
    dirs: Map<string, Dir>;
  }
  const root: Dir = { entries: new Map(), dirs: new Map() };
  for (const [path, entry] of files) {
    const names = path.split('/');
    const base = names.pop()!;
    let dir = root;
    for (const name of names) {
      let sub = dir.dirs.get(name);
      if (!sub) dir.dirs.set(name, (sub = { entries: new Map(), dirs: new Map() }));
      dir = sub;
    }
    dir.entries.set(base, entry);
  }
  const write = (dir: Dir): string => {
    for (const [name, sub] of dir.dirs) dir.entries.set(name, { mode: TREE_MODE, oid: write(sub) });
    const tree = makeTree(dir.entries);
    out.push(tree);
    return tree.oid;
  };
  return write(root);
}
