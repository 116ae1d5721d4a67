// Knowing, without running `git status`, that a small working tree has not changed since the last
// checkpoint: most steps that may change files (a test run, a build that writes only ignored
// output) change none, and spawning git for each costs more than the rest of the checkpoint.
//
// After a checkpoint built from `git status`, the witness records the stat of everything that
// status could have seen change: every file of the index and every untracked file (a content
// change moves the file's ctime), every directory git walked plus every directory inside those
// that is not ignored (a file appearing or vanishing moves its directory's ctime), and the files
// that decide what git sees (the index, HEAD, config and exclude files). The next checkpoint lstats
// them; if every one is as recorded, the working tree is what the last checkpoint recorded. ctime
// cannot be set back by a program (utimes sets mtime and moves ctime forward), and an entry whose
// ctime is within a timestamp tick of the status run makes the witness void (a change in that same
// tick would leave the stat as it was). Used only up to WITNESS_LIMIT files: beyond that, the
// lstats cost as much as git status does. The same kind of witness (StatWitness) lets a big
// working tree's checkpoint take git's last answer for its few tracked files (TrackedStatus).
import { lstatSync, readdirSync, readFileSync, type Stats } from 'node:fs';
import { fsPath, pathFromBytes } from '../os/path-bytes.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseStatus, STATUS_ARGS, type PathChange } from './git-listing.js';

/** The most files (index and untracked together) a witness is kept for. */
export const WITNESS_LIMIT = 1000;

const FINE_TICK_MS = 100;
const COARSE_TICK_MS = 2000;

/** What a full checkpoint saw: the files, and the ignored paths `git status --ignored=matching` named. */
export interface WitnessInput {
  root: string;
  /** This worktree's git dir (index, HEAD) and the shared one (config, info/exclude). */
  gitdir: string;
  commonDir: string;
  files: Iterable<string>;
  ignored: ReadonlySet<string>;
  /** Date.now() just before `git status` was started. */
  statusStartedAt: number;
}

/** The recorded stats of a small working tree, or nothing when they cannot vouch for it. */
export class UnchangedWitness {
  private readonly stats: StatWitness;

  private constructor(stats: StatWitness) {
    this.stats = stats;
  }

  /** Records the witness of a full checkpoint; undefined when too big or too fresh to trust. */
  static record(input: WitnessInput): UnchangedWitness | undefined {
    const files = [...input.files];
    if (files.length > WITNESS_LIMIT) return undefined;
    const dirs = new Set<string>(['']);
    for (const path of files)
      for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) dirs.add(path.slice(0, slash));
    // Directories inside the walked ones that hold no file of the checkpoint (empty ones, or ones
    // holding only empty ones): a file created there is new to git. Ignored ones are left out.
    const pending = [...dirs];
    while (pending.length) {
      const dir = pending.pop()!;
      let children;
      try {
        children = readdirSync(fsPath(join(input.root, dir)), { withFileTypes: true, encoding: 'buffer' });
      } catch {
        return undefined;
      }
      for (const child of children) {
        if (!child.isDirectory()) continue;
        const name = pathFromBytes(child.name); // its bytes kept, as git names it (os/path-bytes.ts)
        const path = dir ? `${dir}/${name}` : name;
        if ((dir === '' && name === '.git') || dirs.has(path) || input.ignored.has(`${path}/`)) continue;
        dirs.add(path);
        pending.push(path);
        if (dirs.size > WITNESS_LIMIT) return undefined;
      }
    }
    const paths = [...files, ...dirs].map((path) => join(input.root, path));
    paths.push(
      ...gitStatePaths(input),
      join(input.gitdir, 'index'),
      join(input.commonDir, 'info/exclude'),
      join(gitConfigHome(), 'ignore'),
    );
    const witness = StatWitness.record(paths, input.statusStartedAt);
    return witness && new UnchangedWitness(witness);
  }

  /** True when every recorded path has the stat it had: nothing git could see has changed. */
  holds(): boolean {
    return this.stats.holds();
  }
}

/** The stats of some paths, recorded after a git command started: all settled before it started. */
export class StatWitness {
  private readonly signatures: Array<[string, string]>;

  private constructor(signatures: Array<[string, string]>) {
    this.signatures = signatures;
  }

  /**
   * Records the stats of `paths` (absolute; a missing one is recorded as missing), for a git
   * command started at `startedAt` (Date.now()); undefined when one of them changed within a
   * timestamp tick of that (a change in the same tick would leave its stat as it was).
   */
  static record(paths: Iterable<string>, startedAt: number): StatWitness | undefined {
    const signatures: Array<[string, string]> = [];
    for (const path of paths) {
      const stat = statOf(path);
      if (stat) {
        const tick = stat.ctimeMs % 1000 === 0 ? COARSE_TICK_MS : FINE_TICK_MS;
        if (stat.ctimeMs > startedAt - tick) return undefined;
      }
      signatures.push([path, signatureOf(stat)]);
    }
    return new StatWitness(signatures);
  }

  /** True when every recorded path has the stat it had. */
  holds(): boolean {
    for (const [path, signature] of this.signatures) if (signatureOf(statOf(path)) !== signature) return false;
    return true;
  }
}

/**
 * The files besides the working tree and the index that decide what `git status` says of tracked
 * files: HEAD and the branch it names (staged changes are against it), the refs packed, the
 * configuration files (system, global, the repository's) and the attributes files outside the
 * working tree (filters, line endings).
 */
export function gitStatePaths(repo: { gitdir: string; commonDir: string }, attributesFile?: string): string[] {
  const paths = [join(repo.gitdir, 'HEAD'), join(repo.gitdir, 'config.worktree'), join(repo.commonDir, 'packed-refs')];
  try {
    const head = /^ref: (refs\/\S+)/.exec(readFileSync(join(repo.gitdir, 'HEAD'), 'utf8'));
    if (head) paths.push(join(repo.commonDir, head[1]!));
  } catch {
    // no HEAD to read: its stat (missing) is recorded
  }
  const config = gitConfigHome();
  paths.push(join(repo.commonDir, 'config'), join(homedir(), '.gitconfig'), join(config, 'config'), '/etc/gitconfig');
  paths.push(join(repo.commonDir, 'info/attributes'), join(config, 'attributes'));
  if (attributesFile) paths.push(attributesFile);
  return paths;
}

function gitConfigHome(): string {
  return process.env.XDG_CONFIG_HOME ? join(process.env.XDG_CONFIG_HOME, 'git') : join(homedir(), '.config', 'git');
}

/**
 * An entry's lstat; undefined when there is none (gone, or beneath what is no longer a directory:
 * lstat fails with ENOTDIR there, which throwIfNoEntry does not cover). Shared with untracked-listing.ts.
 */
export function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(fsPath(path));
  } catch {
    return undefined;
  }
}

function signatureOf(stat: { mtimeMs: number; ctimeMs: number; size: number; ino: number; mode: number } | undefined): string {
  return stat ? `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}:${stat.mode}` : 'none';
}

/** What the tracked side of a big working tree's checkpoint needs: its repository, and git. */
export interface TrackedRepo {
  root: string;
  gitdir: string;
  commonDir: string;
  git(args: string[]): string;
}

/**
 * `git status --untracked-files=no` for an index of at most WITNESS_LIMIT files, run again only when
 * something it depends on may have moved: the checkpoints of a working tree with thousands of
 * untracked files (listed by untracked-listing.ts) need it for the tracked side, and with few
 * tracked files its spawn costs more than lstat()ing them. Its answer is taken again while every
 * tracked file, the files of gitStatePaths and the untracked .gitattributes files have the stats
 * they had before it last ran (see StatWitness); the caller vouches for the rest (the index, the
 * exclude and config files, and the directories).
 */
export class TrackedStatus {
  private readonly repo: TrackedRepo;
  private last: { changes: PathChange[]; witness: StatWitness } | undefined;

  constructor(repo: TrackedRepo) {
    this.repo = repo;
  }

  /**
   * The tracked paths where the working tree differs from the index; `tracked` is the index's
   * paths, `untracked` the untracked files, `settled` whether the caller's part holds (else git runs).
   */
  changes(tracked: ReadonlyMap<string, unknown>, untracked: readonly string[], settled: boolean, attributesFile?: string): PathChange[] {
    if (settled && this.last?.witness.holds()) return [...this.last.changes];
    const startedAt = Date.now();
    const { changes } = parseStatus(this.repo.git([...STATUS_ARGS, '--untracked-files=no']));
    this.record(changes, tracked, untracked, startedAt, attributesFile);
    return [...changes];
  }

  /** Takes `changes` as git's answer from a status started at `startedAt` (with or without untracked files). */
  record(
    changes: PathChange[],
    tracked: ReadonlyMap<string, unknown>,
    untracked: readonly string[],
    startedAt: number,
    attributesFile?: string,
  ): void {
    this.last = undefined;
    if (tracked.size > WITNESS_LIMIT) return;
    const paths = [...tracked.keys()].map((path) => `${this.repo.root}/${path}`);
    for (const path of untracked)
      if (path === '.gitattributes' || path.endsWith('/.gitattributes')) paths.push(`${this.repo.root}/${path}`);
    const witness = StatWitness.record([...paths, ...gitStatePaths(this.repo, attributesFile)], startedAt);
    if (witness) this.last = { changes: [...changes], witness };
  }
}
