// Finds the git repository around a directory by asking git (`git rev-parse`), so GIT_DIR,
// GIT_WORK_TREE, core.worktree, linked worktrees and submodules mean what they mean to git, and
// refuses the ones the journal cannot write safely. The journal is always handed the common git dir
// (`commondir`): in a linked worktree that is the main repository's
// .git, where branches live. Spawning git costs 2-5 ms, so nothing asks twice where it can pass
// the answer down: a run finds its repository once (JournalStore.open) and hands it to its
// checkpoints and its sandbox. Nothing is kept for the process (a folder removed and made anew
// would be answered wrongly); a command that reads settings first asks once more (3-4 ms).
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  GitDirMismatchError,
  GitDiscoveryError,
  JournalCheckedOutError,
  NoWorkTreeError,
  NotARepositoryError,
  RepositoryNotWritableError,
  UnsupportedRepositoryError,
} from '../errors/index.js';
import { runSync } from '../os/processes.js';

/** Where a repository's parts are: its working tree, this worktree's git dir, the shared git dir. */
export interface Repository {
  /** Top of the working tree the agent works in. */
  root: string;
  /** This worktree's own git dir (HEAD, index); differs from commonDir in a linked worktree. */
  gitdir: string;
  /** The git dir that holds objects and refs: where `agent-journal` lives. */
  commonDir: string;
}

// The variables that make git look somewhere other than around the current directory.
const LOCATION_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR'];

/**
 * Finds the repository that contains `dir` as git does (honouring GIT_DIR and GIT_WORK_TREE in
 * `env`); throws NotARepositoryError, NoWorkTreeError, GitDirMismatchError (GIT_DIR naming another
 * repository than the files' own) or UnsupportedRepositoryError. git is asked every time: a run
 * finds its repository once (JournalStore.open) and passes it down, nothing is kept for the process.
 */
export function findRepository(dir: string, env: NodeJS.ProcessEnv = process.env): Repository {
  const start = resolve(dir);
  const found = askGit(start, env);
  if (LOCATION_VARIABLES.some((name) => env[name] !== undefined)) {
    const plain = Object.fromEntries(Object.entries(env).filter(([name]) => !LOCATION_VARIABLES.includes(name)));
    let own: Repository | undefined;
    try {
      own = askGit(found.root, plain);
    } catch {
      own = undefined; // the files are no repository's own: GIT_DIR is how git finds theirs
    }
    if (own && (own.gitdir !== found.gitdir || own.root !== found.root))
      throw new GitDirMismatchError(found.gitdir, found.root, own.gitdir, own.root);
  }
  assertSupported(found.commonDir);
  return found;
}

// git's own answer (`git rev-parse`), asked each time: a run asks once and passes the answer down
// (its journal store's `repo`), so there is nothing to keep for the process.
function askGit(cwd: string, env: NodeJS.ProcessEnv): Repository {
  if (!existsSync(cwd)) throw new NotARepositoryError(cwd);
  const result = runSync('git', ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel'], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.error)
    throw new GitDiscoveryError(
      cwd,
      `git could not be run (${(result.error as NodeJS.ErrnoException).code ?? result.error.message}); is git installed and on PATH?`,
    );
  const [gitdir, commonDir, root] = result.stdout.split('\n');
  if (result.status === 0 && gitdir && commonDir && root) return { root, gitdir, commonDir };
  const said = result.stderr.replace(/^(fatal|error): /gm, '').trim();
  if (/not a git repository/i.test(said)) throw new NotARepositoryError(cwd);
  if (/must be run in a work tree/i.test(said)) throw new NoWorkTreeError(gitdir || cwd);
  const extension = /unknown repository extensions? found:\s*([\s\S]+)/i.exec(said);
  if (extension)
    throw new UnsupportedRepositoryError(
      cwd,
      `the repository extension ${extension[1]!.trim().split(/\s+/).join(', ')}, which this git cannot read`,
    );
  throw new GitDiscoveryError(cwd, said.split('\n').join(' ') || `git rev-parse exited with ${result.status}`);
}

/**
 * Throws RepositoryNotWritableError unless savepoint can write the journal of `repo`: its lock
 * directory (created here), objects and branch refs. Commands that only read never call this.
 */
export function assertJournalWritable(repo: Repository): void {
  const locks = join(repo.commonDir, 'savepoint', 'locks');
  const reasonOf = (error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return 'the file system is mounted read-only';
    if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
    if (code === 'EEXIST' || code === 'ENOTDIR') return 'a file is in the way where a directory must be';
    return code ?? String(error);
  };
  // One level at a time: a recursive mkdir reports ENOENT for a read-only parent.
  for (const path of [join(repo.commonDir, 'savepoint'), locks]) {
    try {
      mkdirSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(path).isDirectory()) continue;
      throw new RepositoryNotWritableError(path, reasonOf(error), { cause: error });
    }
  }
  for (const path of [locks, join(repo.commonDir, 'objects'), join(repo.commonDir, 'refs', 'heads')]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // made when first needed
      throw new RepositoryNotWritableError(path, reasonOf(error), { cause: error });
    }
  }
}

/**
 * Throws JournalCheckedOutError when `ref` is the checked-out branch (HEAD) of the main worktree
 * or of a linked one: moving it would leave that worktree's index and files behind its HEAD.
 */
export function assertNotCheckedOut(repo: Repository, ref: string): void {
  const heads: Array<{ head: string; worktree: () => string }> = [
    { head: join(repo.commonDir, 'HEAD'), worktree: () => resolve(repo.commonDir, '..') },
  ];
  let names: string[] = [];
  try {
    names = readdirSync(join(repo.commonDir, 'worktrees'));
  } catch {
    // no linked worktrees
  }
  for (const name of names) {
    const dir = join(repo.commonDir, 'worktrees', name);
    heads.push({
      head: join(dir, 'HEAD'),
      worktree: () =>
        readFileSync(join(dir, 'gitdir'), 'utf8')
          .trim()
          .replace(/\/\.git$/, ''),
    });
  }
  for (const { head, worktree } of heads) {
    let text: string;
    try {
      text = readFileSync(head, 'utf8');
    } catch {
      continue;
    }
    if (text.trim() !== `ref: ${ref}`) continue;
    if (head === join(repo.commonDir, 'HEAD') && isBare(repo.commonDir)) continue;
    let where: string;
    try {
      where = worktree();
    } catch {
      where = head;
    }
    throw new JournalCheckedOutError(ref, where);
  }
}

/**
 * The root paths of every working tree of the repository: the main one (unless bare) and each
 * linked one (`git worktree add`), as git records them. A run created in none of them came from
 * another machine (or a worktree since removed).
 */
export function worktreeRoots(repo: Repository): Set<string> {
  const roots = new Set<string>([repo.root]);
  if (!isBare(repo.commonDir)) roots.add(resolve(repo.commonDir, '..'));
  let names: string[] = [];
  try {
    names = readdirSync(join(repo.commonDir, 'worktrees'));
  } catch {
    // no linked worktrees
  }
  for (const name of names) {
    try {
      roots.add(
        readFileSync(join(repo.commonDir, 'worktrees', name, 'gitdir'), 'utf8')
          .trim()
          .replace(/\/\.git$/, ''),
      );
    } catch {
      // a worktree being added or pruned right now
    }
  }
  return roots;
}

// The main HEAD of a bare repository checks nothing out.
function isBare(commonDir: string): boolean {
  return readGitConfig(commonDir).get('core.bare')?.toLowerCase() === 'true';
}

// SHA-256 object stores and reftable ref stores would be silently corrupted by our own object and
// ref writers, so they are refused up front.
function assertSupported(commonDir: string): void {
  const config = readGitConfig(commonDir);
  const objectFormat = config.get('extensions.objectformat');
  if (objectFormat && objectFormat.toLowerCase() !== 'sha1') {
    throw new UnsupportedRepositoryError(commonDir, `${objectFormat.toUpperCase()} object names`);
  }
  const refStorage = config.get('extensions.refstorage');
  if (refStorage && refStorage.toLowerCase() !== 'files') {
    throw new UnsupportedRepositoryError(commonDir, `the "${refStorage}" ref storage format`);
  }
  if (existsSync(join(commonDir, 'reftable'))) {
    throw new UnsupportedRepositoryError(commonDir, 'the "reftable" ref storage format');
  }
}

/**
 * A small reader for the keys we need (`section.key`, lower-cased); subsections are ignored.
 * `file` names another config file in `gitdir` (`.gitconfig` in a home directory).
 */
export function readGitConfig(gitdir: string, file = 'config'): Map<string, string> {
  const values = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(join(gitdir, file), 'utf8');
  } catch {
    return values;
  }
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]$/.exec(line);
    if (header) {
      section = /"/.test(line) ? '' : header[1]!.toLowerCase();
      continue;
    }
    const pair = /^([A-Za-z0-9-]+)\s*(?:=\s*(.*))?$/.exec(line);
    if (pair && section) values.set(`${section}.${pair[1]!.toLowerCase()}`, (pair[2] ?? 'true').trim());
  }
  return values;
}

/**
 * What savepoint's own git commands in a working tree start with: config that keeps git from
 * running anything a command could have planted (an fsmonitor hook, hooks, a pager, a submodule
 * summary), overriding every config file. Used by buildOwnGit, never on its own.
 */
export const NEUTRAL_GIT_CONFIG = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'status.submoduleSummary=false',
  '-c',
  'submodule.recurse=false',
  '-c',
  'diff.ignoreSubmodules=all',
];

// Config given through the environment is applied after `-c`: a value there would win over the
// neutral config above.
const CONFIG_VARIABLES = /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/;

/**
 * The command line and environment of one of savepoint's own git commands in a working tree
 * (status, ls-files, check-ignore, diff, config): the neutral config first, `env` without config
 * variables, optional locks off (reading must never write the index). Every such git call is built here.
 */
export function buildOwnGit(args: readonly string[], env: NodeJS.ProcessEnv = process.env): { args: string[]; env: NodeJS.ProcessEnv } {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([name]) => !CONFIG_VARIABLES.test(name)));
  return { args: [...NEUTRAL_GIT_CONFIG, ...args], env: { ...cleaned, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' } };
}

/**
 * Whether the repository `inner` (a submodule checked out inside `outer`'s working tree) keeps its
 * git dir where a command cannot have made or changed it: inside `outer`'s common git dir
 * (`.git/modules/...`, read-only in the sandbox). A git dir in the working tree itself is the
 * command's work, not configuration savepoint may run git with.
 */
export function keepsGitDirInside(inner: Repository, outer: Repository): boolean {
  try {
    const gitdir = realpathSync(inner.gitdir);
    const common = realpathSync(outer.commonDir);
    return gitdir.startsWith(`${common}/`);
  } catch {
    return false;
  }
}
