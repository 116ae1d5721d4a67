// The sandbox run_bash runs its commands in: bubblewrap (`bwrap`), where the machine has it. Inside,
// the whole file system is read-only except the working tree and a private /tmp; the repository's
// git directories (its .git, and the real ones a linked worktree's .git file points to) are
// read-only unless git writes are allowed; there is no network unless it is allowed; and no
// variable named like a secret is in the environment. So every effect of a command lies inside the
// working tree the journal checkpoints.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { findRepository, type Repository } from '../git/repository.js';
import { SECRET_NAME } from '../redact/secret-values.js';

/** How run_bash runs commands: in bubblewrap, or unconfined. */
export interface SandboxConfig {
  kind: 'bwrap' | 'none';
  /** The sandbox keeps the network (`--allow-network`). */
  network?: boolean;
  /** The sandbox lets commands write the repository's git directories (`--allow-git-writes`). */
  gitWrites?: boolean;
}

/** What runs a command: the program, its arguments, and its whole environment. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * The program and arguments that run `script` with bash in `root`, inside the sandbox when there is
 * one, protecting `gitDirs` (default: the repository's, found now; a caller running many commands
 * finds them once with gitPaths and passes them).
 */
export function sandboxedCommand(root: string, script: string, config: SandboxConfig, env: NodeJS.ProcessEnv = process.env, gitDirs?: string[]): SandboxedCommand {
  const bash = [onPath('bash', env.PATH), '-c', script];
  if (config.kind === 'none') return { file: bash[0]!, args: bash.slice(1), env };
  // Inside, the file system is the same (bound read-only), so bash is where it was found outside.
  return { file: onPath('bwrap', env.PATH), args: [...bwrapArgs(root, config, gitDirs ?? gitPaths(root)), '--', ...bash], env: sandboxEnv(env) };
}

// Where `name` is on the search path `path`, looked up once per process and path: handing spawn
// a bare name makes it try every directory of PATH in turn (an execve each: on a long PATH,
// 0.4 ms a command for bwrap, and again inside it for bash). The bare name when none has it,
// for spawn to report as missing.
const found = new Map<string, string>();
function onPath(name: string, path: string | undefined): string {
  const key = `${name}\0${path ?? ''}`;
  let file = found.get(key);
  if (file === undefined) {
    file = name;
    for (const dir of (path ?? '').split(delimiter)) {
      if (!isAbsolute(dir)) break; // a relative entry (or an empty one, the cwd) before it: leave the search to spawn
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        if (!statSync(candidate).isFile()) continue;
      } catch {
        continue;
      }
      file = candidate;
      break;
    }
    found.set(key, file);
  }
  return file;
}

/** The environment inside the sandbox: no secret-named variables, and /tmp as the temporary directory. */
export function sandboxEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!SECRET_NAME.test(name) && value !== undefined) out[name] = value;
  out.TMPDIR = '/tmp';
  return out;
}

function bwrapArgs(root: string, config: SandboxConfig, gitDirs: string[]): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', root, root];
  // After the working tree's bind, so they land on top of it (and of the private /tmp).
  for (const dir of gitDirs) args.push(config.gitWrites ? '--bind' : '--ro-bind', dir, dir);
  // Every namespace (pid: a command's leftovers die with it), the network only when allowed.
  args.push('--unshare-all', ...(config.network ? ['--share-net'] : []));
  // SIGKILL to savepoint reaches the command too. No --new-session: the command must stay in the
  // process group run_bash kills on timeout; it has no terminal to abuse (run_bash starts it in a
  // session of its own).
  args.push('--die-with-parent', '--chdir', root);
  return args;
}

/**
 * The repository's .git (a directory, or the file a linked worktree or submodule has) and the git
 * directories it leads to: what the sandbox binds read-only unless git writes are allowed. From
 * `repo` when the caller has it (a run's one handle: no git asked), else asked of git (`git
 * rev-parse`, 4 ms, a third of a sandboxed `true`: a run finds them once, not per command).
 */
export function gitPaths(root: string, repo?: Repository): string[] {
  const paths = new Set<string>();
  const dotGit = join(root, '.git');
  if (existsSync(dotGit)) paths.add(dotGit);
  try {
    const found = repo ?? findRepository(root);
    paths.add(found.gitdir);
    paths.add(found.commonDir);
  } catch {
    // not a repository: nothing more to protect
  }
  // Outer directories first, so a nested one's mount is not hidden by its parent's.
  return [...paths].sort((a, b) => a.length - b.length);
}

type Probe = { ok: true } | { ok: false; reason: string };

let probed: Probe | undefined;
let probing: Promise<Probe> | undefined;

/**
 * Whether bubblewrap is installed and can start a sandbox here (checked once per process), without
 * blocking: a run starts it early, so the `bwrap ... true` (7–15 ms, more under load) overlaps the
 * journal's opening instead of adding to the time before the first model request.
 */
export function probeSandboxAsync(root: string, gitDirs?: string[]): Promise<Probe> {
  if (probed) return Promise.resolve(probed);
  probing ??= new Promise<Probe>((resolve) => {
    const child = spawn('bwrap', [...bwrapArgs(root, { kind: 'bwrap' }, gitDirs ?? gitPaths(root)), '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error: NodeJS.ErrnoException) => resolve((probed ??= probeOutcome(error, null, stderr))));
    child.once('close', (status) => resolve((probed ??= probeOutcome(undefined, status, stderr))));
  });
  return probing;
}

/** Whether bubblewrap is installed and can start a sandbox here (checked once per process). */
export function probeSandbox(root: string, gitDirs?: string[]): Probe {
  if (probed) return probed;
  const run = spawnSync('bwrap', [...bwrapArgs(root, { kind: 'bwrap' }, gitDirs ?? gitPaths(root)), '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 10_000 });
  probed = probeOutcome(run.error as NodeJS.ErrnoException | undefined, run.status, run.stderr);
  return probed;
}

function probeOutcome(error: NodeJS.ErrnoException | undefined, status: number | null, stderr: string): Probe {
  if (error?.code === 'ENOENT') return { ok: false, reason: 'bubblewrap (bwrap) is not installed' };
  if (error || status !== 0) return { ok: false, reason: `bubblewrap cannot start a sandbox (${(stderr || error?.message || `exit ${status}`).trim().split('\n')[0]})` };
  return { ok: true };
}
