// The untracked files of a big working tree, without git walking all of it at every checkpoint:
// the idea of git's own untracked cache, kept in memory (git's lives in the index, which we never
// write). A directory's set of entries changes only when its stat does (creating, deleting or
// renaming an entry moves its mtime and ctime), so after one full `git status`, each checkpoint
// lstats every directory it saw, and asks git again only about the ones that changed: one
// `git status` with a pathspec of the root minus every unchanged directory beside them, which git
// does not enter. The files of unchanged directories are the ones listed before.
//
// The directories are all the ones git would walk: every directory under the root that is not
// ignored, not `.git`, not a nested repository or a submodule (those are kept as opaque: only
// their own stat is watched). A directory whose ctime is within a timestamp tick of the listing
// start is not trusted (a change in that tick would leave its stat as it was): it is listed again
// next time. A change to what decides ignoring (any directory's .gitignore, info/exclude, the
// config and global ignore files, git's index) makes the next listing a full one. The tracked
// files' side (`git status --untracked-files=no`) is asked again only when a directory or a
// tracked file moved (unchanged.ts, TrackedStatus): an edit of an untracked file costs no git.
import { readdirSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fsPath, hasRawBytes, pathFromBytes } from '../os/path-bytes.js';
import { configuredFiles, parseStatus, STATUS_ARGS, type PathChange } from './git-listing.js';
import { statOf, TrackedStatus } from './unchanged.js';

/** From this many untracked files on (in one full listing), checkpoints list them directory by directory. */
export const UNTRACKED_LISTING_FROM = 1000;

const FINE_TICK_MS = 100;
const COARSE_TICK_MS = 2000;
// Past this many bytes of pathspec, a full listing is cheaper (and fits any command line).
const MAX_PATHSPEC_BYTES = 256 * 1024;

/** Where the listing's repository is, and how to run git there (its output as text). */
export interface ListingRepo {
  root: string;
  gitdir: string;
  commonDir: string;
  git(args: string[]): string;
}

/** The index a listing is for: its signature (a new one lists everything), its paths, its submodules. */
export interface IndexView {
  signature: string;
  entries: ReadonlyMap<string, unknown>;
  gitlinks: readonly string[];
}

/** What `git status` says differs from the index: changed tracked paths, and untracked files. */
export interface Listing {
  changes: PathChange[];
  /** The same array from one listing to the next while no directory changed. */
  untracked: readonly string[];
}

interface DirRecord {
  stat: string; // the directory's own stat
  ignoreFile: string; // the stat of its .gitignore ('none' without one)
  trusted: boolean;
  opaque: boolean; // a nested repository or submodule: nothing inside is listed
  files: string[]; // the untracked files directly in it (paths from the root)
}

/** The untracked files of one working tree, re-listed by git only where directories changed. */
export class UntrackedListing {
  private readonly repo: ListingRepo;
  private dirs = new Map<string, DirRecord>();
  private context: string | undefined; // the stats of what decides ignoring, at the last full listing
  private all: string[] | undefined; // every record's files, rebuilt when a record changes
  private previous: string[] | undefined; // the last `all` handed out
  private excludesFile: string | undefined; // core.excludesFile, looked up at each full listing
  private attributesFile: string | undefined; // core.attributesFile, the same
  private readonly tracked: TrackedStatus; // the tracked side: git status, or its answer again

  constructor(repo: ListingRepo) {
    this.repo = repo;
    this.tracked = new TrackedStatus(repo);
  }

  /**
   * Takes over a full `git status --untracked-files=all --ignored=matching` that was started at
   * `startedAt` (Date.now()) with `index` (gitlinks: submodules); `changes` are its tracked paths.
   */
  adopt(untracked: string[], ignored: ReadonlySet<string>, changes: PathChange[], startedAt: number, index: IndexView): void {
    const { signature, gitlinks } = index;
    ({ excludesFile: this.excludesFile, attributesFile: this.attributesFile } = configuredFiles(this.repo));
    this.tracked.record(changes, index.entries, untracked, startedAt, this.attributesFile);
    const context = this.contextSignature(signature);
    this.dirs = new Map();
    this.all = undefined;
    const fresh = this.addListed(untracked, gitlinks);
    this.walk([''], ignored, gitlinks, fresh);
    this.restat([...this.dirs.keys()], startedAt);
    this.context = context.stale(startedAt) ? undefined : context.value;
  }

  /**
   * What differs from the index now (a new index, by its signature, lists everything again).
   */
  list(index: IndexView): Listing {
    const { gitlinks } = index;
    const startedAt = Date.now();
    const context = this.contextSignature(index.signature);
    if (context.value !== this.context) return this.full(startedAt, index);
    const changed = new Set<string>();
    const restat: string[] = [];
    for (const [dir, record] of this.dirs) {
      const stat = statOf(this.path(dir));
      if (!stat?.isDirectory()) {
        if (dir === '') return this.full(startedAt, index);
        changed.add(dir); // gone, or no longer a directory: its parent changed too
        continue;
      }
      const same = record.trusted && signatureOf(stat) === record.stat;
      // Editing a .gitignore leaves its directory's stat as it was; creating one does not.
      if ((!same || record.ignoreFile !== 'none') && signatureOf(statOf(this.path(join(dir, '.gitignore')))) !== record.ignoreFile) {
        return this.full(startedAt, index);
      }
      if (same) continue;
      // A directory that became, or stopped being, a repository of its own changes what git lists.
      const repository = dir !== '' && (gitlinks.includes(dir) || statOf(this.path(`${dir}/.git`)) !== undefined);
      if (record.opaque !== repository) return this.full(startedAt, index);
      if (record.opaque)
        restat.push(dir); // nothing inside is listed: only its stat is news
      else changed.add(dir);
    }
    if (changed.size > 0 && !this.relist(changed, startedAt, gitlinks)) return this.full(startedAt, index);
    this.restat(restat, startedAt);
    // With no directory changed, git's answer for the tracked files may be the last one (unchanged.ts).
    const changes = this.tracked.changes(index.entries, this.files(), changed.size === 0 && restat.length === 0, this.attributesFile);
    return { changes, untracked: this.files() };
  }

  // Lists the changed directories again (their direct files, and every new directory in them):
  // one `git status` of the root that leaves out each unchanged directory beside them, and with
  // it everything beneath. False when that pathspec would be too long.
  private relist(changed: Set<string>, startedAt: number, gitlinks: readonly string[]): boolean {
    const listed = new Set<string>(['']); // the changed directories and their parents
    for (const dir of changed) for (let d = dir; d !== '' && !listed.has(d); d = parentOf(d)) listed.add(d);
    const specs = [':(top)'];
    let bytes = 0;
    for (const dir of this.dirs.keys()) {
      if (listed.has(dir) || !listed.has(parentOf(dir))) continue;
      if (hasRawBytes(dir)) return false; // a command line is UTF-8: its name cannot be said there
      specs.push(`:(top,exclude,literal)${dir}/`);
      bytes += dir.length + 24;
      if (bytes > MAX_PATHSPEC_BYTES) return false;
    }
    const { untracked, ignored } = parseStatus(
      this.repo.git([...STATUS_ARGS, '--untracked-files=all', '--ignored=matching', '--', ...specs]),
    );
    // A known directory not listed again is unchanged, and so is everything beneath it. A listed
    // one (gone ones are among them, and so are their subdirectories) is refilled from git's answer.
    for (const dir of listed) {
      const record = this.dirs.get(dir);
      if (!record) continue;
      if (this.isDir(dir)) record.files = [];
      else this.dirs.delete(dir);
    }
    // git does not enter an excluded directory; should it ever, what it says there is not taken.
    const excluded = (path: string) => {
      for (let d = parentOf(path); d !== ''; d = parentOf(d)) if (!listed.has(d) && listed.has(parentOf(d))) return this.dirs.has(d);
      return false;
    };
    const fresh = this.addListed(
      untracked.filter((path) => !excluded(path.endsWith('/') ? path.slice(0, -1) : path)),
      gitlinks,
    );
    const walked = this.walk(
      [...listed].filter((dir) => this.dirs.has(dir)),
      ignored,
      gitlinks,
      fresh,
    );
    this.all = undefined;
    this.restat(
      [...listed, ...fresh, ...walked].filter((dir) => this.dirs.has(dir)),
      startedAt,
    );
    return true;
  }

  private full(startedAt: number, index: IndexView): Listing {
    const { changes, untracked, ignored } = parseStatus(this.repo.git([...STATUS_ARGS, '--untracked-files=all', '--ignored=matching']));
    this.adopt(untracked, ignored, changes, startedAt, index);
    return { changes, untracked: this.files() };
  }

  // Files git listed, each into its directory's record (created with its parents as needed); an
  // entry ending in `/` is a nested repository (opaque). Returns the directories created.
  private addListed(untracked: string[], gitlinks: readonly string[]): Set<string> {
    const created = new Set<string>();
    const ensure = (dir: string): DirRecord => {
      let record = this.dirs.get(dir);
      if (!record) {
        if (dir !== '') ensure(parentOf(dir));
        record = { stat: '', ignoreFile: 'none', trusted: false, opaque: dir !== '' && gitlinks.includes(dir), files: [] };
        this.dirs.set(dir, record);
        created.add(dir);
      }
      return record;
    };
    ensure('');
    for (const path of untracked) {
      if (!path.endsWith('/')) {
        ensure(parentOf(path)).files.push(path);
        continue;
      }
      const record = ensure(path.slice(0, -1));
      record.opaque = true;
      record.files = [];
    }
    return created;
  }

  // Every directory beneath `from` that git walks and that is not known yet (the ones holding no
  // untracked file: empty, or only tracked or ignored files), and beneath the `fresh` ones (known
  // from this very listing): a file created there is new to git. Returns the ones it added.
  private walk(from: string[], ignored: ReadonlySet<string>, gitlinks: readonly string[], fresh: ReadonlySet<string>): string[] {
    const found: string[] = [];
    const pending = [...from];
    while (pending.length) {
      const dir = pending.pop()!;
      if (this.dirs.get(dir)?.opaque) continue;
      let children;
      try {
        children = readdirSync(fsPath(this.path(dir)), { withFileTypes: true, encoding: 'buffer' });
      } catch {
        continue; // gone since git listed it: its parent's stat has moved, so it is listed again
      }
      for (const child of children) {
        const name = pathFromBytes(child.name); // its bytes kept, as git names it (os/path-bytes.ts)
        if (!child.isDirectory() || name === '.git') continue;
        const path = dir ? `${dir}/${name}` : name;
        if (ignored.has(`${path}/`)) continue;
        if (this.dirs.has(path)) {
          if (fresh.has(path)) pending.push(path);
          continue;
        }
        this.dirs.set(path, { stat: '', ignoreFile: 'none', trusted: false, opaque: gitlinks.includes(path), files: [] });
        found.push(path);
        pending.push(path);
      }
    }
    return found;
  }

  // Records the stats of `dirs` after a listing started at `startedAt`: trusted only if nothing in
  // them changed within a timestamp tick of that start (ctime cannot be set back).
  private restat(dirs: string[], startedAt: number): void {
    for (const dir of dirs) {
      const record = this.dirs.get(dir);
      if (!record) continue;
      const stat = statOf(this.path(dir));
      const ignoreFile = statOf(this.path(dir ? `${dir}/.gitignore` : '.gitignore'));
      record.stat = signatureOf(stat);
      record.ignoreFile = signatureOf(ignoreFile);
      record.trusted = settled(stat, startedAt) && settled(ignoreFile, startedAt);
    }
  }

  // The stats of what decides what git lists: the index (its signature), exclude and config files.
  private contextSignature(index: string): { value: string; stale(startedAt: number): boolean } {
    const config = process.env.XDG_CONFIG_HOME ? join(process.env.XDG_CONFIG_HOME, 'git') : join(homedir(), '.config', 'git');
    const { gitdir, commonDir } = this.repo;
    const paths = [
      join(gitdir, 'config.worktree'),
      join(commonDir, 'config'),
      join(commonDir, 'info/exclude'),
      join(homedir(), '.gitconfig'),
      join(config, 'ignore'),
      join(config, 'config'),
    ];
    if (this.excludesFile) paths.push(this.excludesFile);
    const stats = paths.map((path) => statOf(path));
    return { value: [index, ...stats.map(signatureOf)].join('|'), stale: (startedAt) => !stats.every((stat) => settled(stat, startedAt)) };
  }

  // Every untracked file; the very array of last time while they are the same files (a directory
  // re-listed with nothing new in it), so that what was checked for that array holds.
  private files(): string[] {
    if (!this.all) {
      const all: string[] = [];
      for (const record of this.dirs.values()) for (const file of record.files) all.push(file);
      const last = this.previous;
      this.all = last && last.length === all.length && all.every((file, i) => file === last[i]) ? last : all;
      this.previous = this.all;
    }
    return this.all;
  }

  private isDir(dir: string): boolean {
    return statOf(this.path(dir))?.isDirectory() ?? false;
  }

  private path(path: string): string {
    return path ? `${this.repo.root}/${path}` : this.repo.root;
  }
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function signatureOf(stat: Stats | undefined): string {
  return stat ? `${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}:${stat.mode}` : 'none';
}

// Whether nothing changed in this entry within a timestamp tick of `startedAt` (absent: nothing to change).
function settled(stat: Stats | undefined, startedAt: number): boolean {
  if (!stat) return true;
  const tick = stat.ctimeMs % 1000 === 0 ? COARSE_TICK_MS : FINE_TICK_MS;
  return stat.ctimeMs < startedAt - tick;
}
