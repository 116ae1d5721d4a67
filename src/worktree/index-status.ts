// What a checkpoint starts from, as git sees the working tree: the index (read, never written),
// where the working tree differs from it (`git status`, or directory by directory once there are
// many untracked files: untracked-listing.ts), which file git ignores, and HEAD's trees when the
// working tree is HEAD's as it stands. The snapshotter (snapshot.ts) turns these into trees. The
// first checkpoint needs both the index and the status: where the caller can wait (a run's first
// checkpoint, a resume's drift check), the two git commands run side by side (askFirst).
import { execFile, execFileSync } from 'node:child_process';
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

/** The first pass's two answers of git, asked side by side (WorktreeStatus.askFirst), for the next readIndex and changedPaths. */
export interface FirstAnswers {
  /** The index file's signature when they were asked: they hold only while it is the same. */
  signature: string;
  /** Date.now() just before the commands were started. */
  startedAt: number;
  /** `git ls-files --stage -z`. */
  listing: string;
  /** The first pass's `git status`, with `--ignored=matching` when `ignoredAsked`. */
  status: string;
  ignoredAsked: boolean;
}

// An index file up to this size may hold few enough entries for a witness (WITNESS_LIMIT of them,
// with their 62 bytes of stat data and a path each): the first pass, asked before the index is
// read, asks for the ignored paths only then (they cost a fifth more than the status on a big tree).
const SMALL_INDEX_BYTES = WITNESS_LIMIT * 160;

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
  private answers: FirstAnswers | undefined; // given for one pass (use), asked ahead of it (askFirst)

  constructor(repo: Repository, options: { hashEveryFile: boolean; untrackedListingFrom: number }) {
    this.repo = repo;
    this.hashEveryFile = options.hashEveryFile;
    this.untrackedListingFrom = options.untrackedListingFrom;
  }

  /** Index entries at stage 0 (path -> mode, blob), re-read only when the index file changed. */
  readIndex(): IndexEntries {
    const { signature } = this.indexFile();
    if (this.index?.signature === signature) return this.index;
    const listing = this.answers?.signature === signature ? this.answers.listing : undefined;
    const { entries, gitlinks } = signature === 'none' ? { entries: new Map<string, FileEntry>(), gitlinks: [] } : parseIndexListing(listing ?? this.git(['ls-files', '--stage', '-z']));
    this.index = { signature, entries, gitlinks };
    return this.index;
  }

  /**
   * The first pass's `git ls-files` and `git status`, run side by side (two processes at once, not
   * one after the other), for a pass to take through `use`; undefined when the index was read
   * already (only the status is then asked), or when either command failed (the pass asks again,
   * one by one, and says why). `small` as StatusPass's.
   */
  async askFirst(small: boolean): Promise<FirstAnswers | undefined> {
    const { signature, size } = this.indexFile();
    if (signature === 'none' || this.index?.signature === signature || this.listing || this.hashEveryFile) return undefined;
    const ignoredAsked = small && size <= SMALL_INDEX_BYTES;
    const startedAt = Date.now();
    const [listing, status] = await Promise.all([this.gitAsync(['ls-files', '--stage', '-z']), this.gitAsync(statusArgs(true, ignoredAsked))]);
    return listing === undefined || status === undefined ? undefined : { signature, startedAt, listing, status, ignoredAsked };
  }

  /** Gives askFirst's answers to the pass `pass` runs now (synchronously), and forgets them after it. */
  use<T>(answers: FirstAnswers | undefined, pass: () => T): T {
    this.answers = answers;
    try {
      return pass();
    } finally {
      this.answers = undefined;
    }
  }

  /** Date.now() as the status of a pass on `index` starts: earlier, when it was asked ahead (askFirst). */
  startTime(index: IndexEntries): number {
    return this.answers && this.answers.signature === index.signature ? this.answers.startedAt : Date.now();
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
    let ignoredAsked = witnessed; // whether the answer names the ignored paths a witness needs
    if (this.listing) listed = this.listing.list(index);
    else {
      // The ignored paths are wanted only for a witness (a small tree) or for the untracked
      // listing to start from; asking git for them costs a fifth more than `git status` itself on
      // a big tree, so a big tree with few untracked files is scanned without (measured in
      // bench/scan.ts), and asked again, once, if it now has many. Asked ahead (askFirst), they
      // were asked by the index file's size: without them, no witness this time.
      const asked = pass.first && this.answers?.signature === index.signature ? this.answers : undefined;
      if (asked) ignoredAsked = asked.ignoredAsked;
      let status = parseStatus(asked ? asked.status : this.git(statusArgs(pass.first, witnessed)));
      if (status.untracked.length >= this.untrackedListingFrom) {
        if (!ignoredAsked) {
          startedAt = Date.now();
          status = parseStatus(this.git(statusArgs(false, true)));
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
    return { changes, untracked, ...(head ? { head } : {}), ...(witnessed && ignoredAsked && listed.ignored ? { ignored: listed.ignored } : {}) };
  }

  /** Whether git ignores the untracked file at `path` (a write into node_modules, say). */
  ignored(path: string): boolean {
    try {
      const git = buildOwnGit(['check-ignore', '-q', '--no-index', '--', path]);
      execFileSync('git', git.args, { cwd: this.repo.root, env: git.env, stdio: 'ignore' });
      return true;
    } catch (error) {
      if ((error as { status?: number }).status === 1) return false;
      throw error;
    }
  }

  // The index file's signature (its mtime, size and inode: 'none' when there is none) and size.
  private indexFile(): { signature: string; size: number } {
    try {
      const stat = statSync(join(this.repo.gitdir, 'index'));
      return { signature: `${stat.mtimeMs}:${stat.size}:${stat.ino}`, size: stat.size };
    } catch {
      return { signature: 'none', size: 0 }; // a repository with no index yet: nothing tracked
    }
  }

  // git's answer as bytes, decoded so that a name that is not UTF-8 keeps its bytes (os/path-bytes.ts).
  private git(args: string[]): string {
    const git = buildOwnGit(args);
    return pathFromBytes(execFileSync('git', git.args, { cwd: this.repo.root, env: git.env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  // The same without waiting for it; undefined when git failed or could not be started.
  private gitAsync(args: string[]): Promise<string | undefined> {
    const git = buildOwnGit(args);
    return new Promise((resolve) => {
      try {
        execFile('git', git.args, { cwd: this.repo.root, env: git.env, maxBuffer: 1 << 30, encoding: 'buffer' }, (error, stdout) => resolve(error ? undefined : pathFromBytes(stdout)));
      } catch {
        resolve(undefined); // no file descriptors left for its pipes, say: asked again one by one
      }
    });
  }
}

// A pass's `git status`: for a first build HEAD's commit too (headTrees), with no ahead/behind
// count (it walks history); the ignored paths when asked.
function statusArgs(first: boolean, ignored: boolean): string[] {
  return [...STATUS_ARGS, ...(first ? ['--branch', '--no-ahead-behind'] : []), '--untracked-files=all', ...(ignored ? ['--ignored=matching'] : [])];
}

/**
 * HEAD's trees, when the working tree is HEAD's as git's index has it: `git status` named no
 * change (staged ones included) and no untracked file, and no submodule is recorded as its
 * working tree. undefined when HEAD's commit or root tree cannot be read here, or is not as git
 * would write it.
 */
export function headTrees(objects: ObjectStore, head: string | undefined, index: { entries: ReadonlyMap<string, FileEntry>; gitlinks: string[] }, untracked: number, redactText: (text: string) => string): StoredTrees | undefined {
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
