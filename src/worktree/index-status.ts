// What a checkpoint starts from, as git sees the working tree: the index (read, never written),
// where the working tree differs from it (`git status`, or directory by directory once there are
// many untracked files: untracked-listing.ts), which file git ignores, and HEAD's trees when the
// working tree is HEAD's as it stands. The snapshotter (snapshot.ts) turns these into trees.
// Tested in test/worktree/one-path-checkpoint.test.ts, test/worktree/untracked-listing.test.ts.
import { outputSync } from '../os/processes.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommit } from '../git/git-object.js';
import type { ObjectStore } from '../git/object-store.js';
import { buildOwnGit, type Repository } from '../git/repository.js';
import { pathFromBytes } from '../os/path-bytes.js';
import type { FileEntry } from './entries.js';
import { GITLINK_MODE, parseIndexListing, parseStatus, STATUS_ARGS, type PathChange } from './git-listing.js';
import { StoredTrees, unlessUnreadable } from './tree-build.js';
import { WITNESS_LIMIT } from './unchanged.js';
import { UntrackedListing } from './untracked-listing.js';

/** git's index as read: the signature of its file, its stage-0 entries, and its submodules' paths. */
export interface IndexEntries {
  signature: string;
  entries: Map<string, FileEntry>;
  gitlinks: string[];
}

/** Where the working tree differs from the index, and (when asked for) what git ignores and HEAD's commit. */
export interface StatusListing {
  changes: PathChange[];
  untracked: readonly string[];
  ignored?: Set<string>;
  head?: string;
}

/** How one checkpoint's status is asked for. */
export interface StatusPass {
  /** The last pass saw few files: ask for the ignored paths too, for a witness (unchanged.ts). */
  small: boolean;
  /** No trees were built yet: ask for HEAD's commit too (headTrees). */
  first: boolean;
}

/** Reads one repository's index and status through git, keeping what it can between checkpoints. */
export class WorktreeStatus {
  private readonly repo: Repository;
  private readonly hashEveryFile: boolean;
  private readonly untrackedListingFrom: number;
  private index: IndexEntries | undefined;
  private listing: UntrackedListing | undefined; // many untracked files: listed by directory

  constructor(repo: Repository, options: { hashEveryFile: boolean; untrackedListingFrom: number }) {
    this.repo = repo;
    this.hashEveryFile = options.hashEveryFile;
    this.untrackedListingFrom = options.untrackedListingFrom;
  }

  /** Index entries at stage 0 (path -> mode, blob), re-read only when the index file changed. */
  readIndex(): IndexEntries {
    const indexPath = join(this.repo.gitdir, 'index');
    let signature = 'none';
    try {
      const stat = statSync(indexPath);
      signature = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // a repository with no index yet: nothing tracked
    }
    if (this.index?.signature === signature) return this.index;
    const { entries, gitlinks } =
      signature === 'none'
        ? { entries: new Map<string, FileEntry>(), gitlinks: [] }
        : parseIndexListing(this.git(['ls-files', '--stage', '-z']));
    this.index = { signature, entries, gitlinks };
    return this.index;
  }

  /**
   * Paths whose working-tree file differs from the index, unmerged ones, and untracked ones (with
   * hashEveryFile, every file of the index too); for a small tree, also the ignored ones (a witness).
   * Many untracked files are listed by directory from then on (untracked-listing.ts).
   */
  changedPaths(index: IndexEntries, startedAt: number, pass: StatusPass): StatusListing {
    const { entries, gitlinks } = index;
    const witnessed = pass.small && entries.size <= WITNESS_LIMIT && gitlinks.length === 0 && !this.hashEveryFile;
    let listed: StatusListing;
    if (this.listing) listed = this.listing.list(index);
    else {
      // The ignored paths are wanted only for a witness (a small tree) or for the untracked
      // listing to start from; asking git for them costs a fifth more than `git status` itself on
      // a big tree, so a big tree with few untracked files is scanned without (measured in
      // bench/scan.ts), and asked again, once, if it now has many.
      const ignoredArgs = (asked: boolean) => (asked ? ['--ignored=matching'] : []);
      // HEAD's commit only for a first build (headTrees); no ahead/behind count: it walks history.
      const branch = pass.first ? ['--branch', '--no-ahead-behind'] : [];
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

  /** Whether git ignores the untracked file at `path` (a write into node_modules, say). */
  ignored(path: string): boolean {
    try {
      const git = buildOwnGit(['check-ignore', '-q', '--no-index', '--', path]);
      outputSync('git', git.args, { cwd: this.repo.root, env: git.env, stdio: 'ignore' });
      return true;
    } catch (error) {
      if ((error as { status?: number }).status === 1) return false;
      throw error;
    }
  }

  // git's answer as bytes, decoded so that a name that is not UTF-8 keeps its bytes (os/path-bytes.ts).
  private git(args: string[]): string {
    const git = buildOwnGit(args);
    return pathFromBytes(
      outputSync('git', git.args, { cwd: this.repo.root, env: git.env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  }
}

/**
 * HEAD's trees, when the working tree is HEAD's as git's index has it: `git status` named no
 * change (staged ones included) and no untracked file, and no submodule is recorded as its
 * working tree. undefined when HEAD's commit or root tree cannot be read here, or is not as git
 * would write it.
 */
export function headTrees(
  objects: ObjectStore,
  head: string | undefined,
  index: { entries: ReadonlyMap<string, FileEntry>; gitlinks: string[] },
  untracked: number,
  redactText: (text: string) => string,
): StoredTrees | undefined {
  if (!head || untracked > 0 || index.gitlinks.length > 0 || index.entries.size === 0) return undefined;
  if (!namesAsTheyAre(index.entries.keys(), redactText)) return undefined;
  const commit = objects.readNow(head, 'commit');
  if (!commit) return undefined;
  return unlessUnreadable(() => new StoredTrees(parseCommit(head, commit).tree, (oid) => objects.readNow(oid, 'tree')));
}

// HEAD's trees hold every name as it is: they are the checkpoint's only when no name of the index
// would be recorded otherwise (a secret in it, redact/names.ts). One pass of the redactor over all
// the paths at once (the name recorder is the same redactor's): a match across two names only
// sends this checkpoint the long way, which redacts name by name.
function namesAsTheyAre(paths: Iterable<string>, redactText: (text: string) => string): boolean {
  const all = [...paths].join('\n');
  return !all.includes('[REDACTED:') && redactText(all) === all;
}
