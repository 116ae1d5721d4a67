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
// lstats cost as much as git status does.
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

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
  private readonly signatures: Array<[string, string]>;

  private constructor(signatures: Array<[string, string]>) {
    this.signatures = signatures;
  }

  /** Records the witness of a full checkpoint; undefined when too big or too fresh to trust. */
  static record(input: WitnessInput): UnchangedWitness | undefined {
    const files = [...input.files];
    if (files.length > WITNESS_LIMIT) return undefined;
    const dirs = new Set<string>(['']);
    for (const path of files) for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) dirs.add(path.slice(0, slash));
    // Directories inside the walked ones that hold no file of the checkpoint (empty ones, or ones
    // holding only empty ones): a file created there is new to git. Ignored ones are left out.
    const pending = [...dirs];
    while (pending.length) {
      const dir = pending.pop()!;
      let children;
      try {
        children = readdirSync(join(input.root, dir), { withFileTypes: true });
      } catch {
        return undefined;
      }
      for (const child of children) {
        if (!child.isDirectory()) continue;
        const path = dir ? `${dir}/${child.name}` : child.name;
        if ((dir === '' && child.name === '.git') || dirs.has(path) || input.ignored.has(`${path}/`)) continue;
        dirs.add(path);
        pending.push(path);
        if (dirs.size > WITNESS_LIMIT) return undefined;
      }
    }
    const paths = [...files, ...dirs].map((path) => join(input.root, path));
    const config = process.env.XDG_CONFIG_HOME ? join(process.env.XDG_CONFIG_HOME, 'git') : join(homedir(), '.config', 'git');
    paths.push(join(input.gitdir, 'index'), join(input.gitdir, 'HEAD'), join(input.gitdir, 'config.worktree'));
    paths.push(...['config', 'info/exclude', 'packed-refs'].map((name) => join(input.commonDir, name)), join(homedir(), '.gitconfig'), join(config, 'ignore'), join(config, 'config'));
    const signatures: Array<[string, string]> = [];
    for (const path of paths) {
      const stat = statOf(path);
      if (stat) {
        const tick = stat.ctimeMs % 1000 === 0 ? COARSE_TICK_MS : FINE_TICK_MS;
        if (stat.ctimeMs > input.statusStartedAt - tick) return undefined;
      }
      signatures.push([path, signatureOf(stat)]);
    }
    return new UnchangedWitness(signatures);
  }

  /** True when every recorded path has the stat it had: nothing git could see has changed. */
  holds(): boolean {
    for (const [path, signature] of this.signatures) if (signatureOf(statOf(path)) !== signature) return false;
    return true;
  }
}

// An entry's lstat; undefined when there is none (gone, or beneath what is no longer a directory:
// lstat fails with ENOTDIR there, which throwIfNoEntry does not cover).
function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function signatureOf(stat: { mtimeMs: number; ctimeMs: number; size: number; ino: number; mode: number } | undefined): string {
  return stat ? `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}:${stat.mode}` : 'none';
}
