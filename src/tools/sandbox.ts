// The sandbox run_bash runs its commands in (and stdio MCP servers, tools/mcp/connections.ts):
// bubblewrap (`bwrap`), where the machine has it. Inside, the whole file system is read-only except
// the working tree and a private /tmp; the repository's git directories (its .git, and the real
// ones a linked worktree's .git file points to) are read-only unless git writes are allowed; the
// files that decide what runs (tools/control-files.ts: .savepoint/, .claude/, .mcp.json, every
// AGENTS.md and CLAUDE.md) are read-only always; there is no network unless it is allowed; and no
// variable named like a secret is in the environment. So every effect of a command lies inside the
// working tree the journal checkpoints, and none of it changes what a later run starts or reads.
//
// A mount can only cover a path that exists: a command creating a control file where there was none
// (a new .mcp.json) is not stopped here. Such a file is untrusted until the person says otherwise
// (folder trust), and the step's result says the command made it (absentControlFiles, sandbox-notes.ts).
// Tested in test/tools/sandbox-probe.test.ts.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { buildOwnGit, findRepository, type Repository } from '../git/repository.js';
import { runProcess, runSync } from '../os/processes.js';
import { CONTROL_FOLDERS, CONTROL_ROOT_FILES, INSTRUCTION_FILE_NAMES } from './control-files.js';
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
 * How every bash savepoint starts for a command begins, before its `-c`: without the person's
 * startup files. A bash that is not interactive reads none, unless it takes itself for one started
 * by sshd: stdin a socket (a hook's: Node's pipes are Unix sockets) or SSH_CLIENT set, and SHLVL
 * unset or 0 (savepoint started by cron, systemd, an editor or a CI runner, where a terminal's
 * shell would have set it). Then it sources ~/.bashrc, whose output lands in the command's, and
 * whose PATH and time (a pyenv init there: 170 ms a command) the command takes on. `--norc` makes
 * every start the same whatever savepoint's parent; `--noprofile` keeps the login files out should
 * bash ever be started as a login shell. $BASH_ENV, bash's own variable for setting up such
 * shells, is still read.
 */
export const BASH_STARTUP: readonly string[] = ['--norc', '--noprofile'];

/**
 * The program and arguments that run `script` with bash in `root`, inside the sandbox when there is
 * one, protecting `gitDirs` (default: the repository's, found now; a caller running many commands
 * finds them once with gitPaths and passes them).
 */
export function sandboxedCommand(
  root: string,
  script: string,
  config: SandboxConfig,
  env: NodeJS.ProcessEnv = process.env,
  gitDirs?: string[],
): SandboxedCommand {
  const bash = [onPath('bash', env.PATH), ...BASH_STARTUP, '-c', script];
  if (config.kind === 'none') return { file: bash[0]!, args: bash.slice(1), env };
  // Inside, the file system is the same (bound read-only), so bash is where it was found outside.
  return {
    file: onPath('bwrap', env.PATH),
    args: [...bwrapArgs(root, config, gitDirs ?? gitPaths(root), controlPaths(root)), '--', ...bash],
    env: sandboxEnv(env),
  };
}

/**
 * The program and arguments that run `command` with `args` inside the sandbox `config` (a stdio MCP
 * server), its directory `cwd` (inside, when it is under the working tree or elsewhere outside /tmp;
 * else the working tree). Its environment is the caller's: a server's is built from its configuration.
 */
export function sandboxedProgram(
  root: string,
  command: string,
  args: string[],
  config: SandboxConfig,
  options: { gitDirs?: string[]; cwd?: string; path?: string } = {},
): { file: string; args: string[] } {
  if (config.kind === 'none') return { file: command, args };
  const cwd = options.cwd && (!isInside(options.cwd, '/tmp') || isInside(options.cwd, root)) ? options.cwd : root;
  return {
    file: onPath('bwrap', options.path ?? process.env.PATH),
    args: [
      ...bwrapArgs(root, config, options.gitDirs ?? gitPaths(root), controlPaths(root), cwd, programFolders(root, [command, ...args])),
      '--',
      command,
      ...args,
    ],
  };
}

// The folders under /tmp that hold a server's own program: the private /tmp would hide a program
// (and the packages beside it, a node_modules above it) that its configuration names by an absolute
// path under /tmp, as a checkout or an unpacked package there has. Each is the folder right under
// /tmp that holds such a path, bound read-only: nothing in it becomes writable, the rest of /tmp
// stays private.
function programFolders(root: string, words: string[]): string[] {
  const folders = new Set<string>();
  for (const word of words) {
    if (!isAbsolute(word) || !isInside(word, '/tmp') || isInside(word, root) || !existsSync(word)) continue;
    const top = relative('/tmp', word).split(sep)[0];
    if (top) folders.add(join('/tmp', top));
  }
  return [...folders];
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Where the program `name` is on the search path `path` (a name with a `/` is its own path), or undefined when no directory of it has one. */
export function programOnPath(name: string, path: string | undefined): string | undefined {
  if (name.includes('/')) return name;
  for (const dir of (path ?? '').split(delimiter)) {
    const candidate = resolve(dir || '.', name); // an empty entry is the current directory, as for execvp
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
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

function bwrapArgs(
  root: string,
  config: SandboxConfig,
  gitDirs: string[],
  control: string[],
  cwd = root,
  readOnlyInTmp: string[] = [],
): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // Before the working tree's bind, so a working tree inside one of them stays writable.
  for (const folder of readOnlyInTmp) args.push('--ro-bind', folder, folder);
  args.push('--bind', root, root);
  // After the working tree's bind, so they land on top of it (and of the private /tmp).
  for (const dir of gitDirs) args.push(config.gitWrites ? '--bind' : '--ro-bind', dir, dir);
  // Read-only whatever git writes allow. `-try`: bwrap skips one that does not exist (nothing to
  // cover), so the list is the same for every command (and a spare shell started ahead still fits).
  // A mounted file cannot be written (EROFS), removed or renamed (EBUSY), nor hard-linked to (EXDEV).
  for (const path of control) args.push('--ro-bind-try', path, path);
  // Every namespace (pid: a command's leftovers die with it), the network only when allowed.
  args.push('--unshare-all', ...(config.network ? ['--share-net'] : []));
  // SIGKILL to savepoint reaches the command too. No --new-session: the command must stay in the
  // process group run_bash kills on timeout; it has no terminal to abuse (run_bash starts it in a
  // session of its own).
  args.push('--die-with-parent', '--chdir', cwd);
  return args;
}

/**
 * The files that decide what runs at the root of `root` that do not exist now, relative: those a
 * sandboxed command could still create, since a mount covers only what exists (five stat calls).
 */
export function absentControlFiles(root: string): string[] {
  return [...CONTROL_FOLDERS, ...CONTROL_ROOT_FILES, ...INSTRUCTION_FILE_NAMES].filter((name) => !existsSync(join(root, name)));
}

// The instruction files below the root, per root: found once per process (a run), see controlPaths.
const instructionFilesBelow = new Map<string, string[]>();

/**
 * The files that decide what runs in the working tree at `root` (tools/control-files.ts), as
 * absolute paths for the sandbox to bind read-only: the folders and files at the root whether or not
 * they exist (a bind of a missing one is skipped), and every AGENTS.md or CLAUDE.md below it, found
 * once per process with git (tracked or not, not ignored: `git ls-files`, 5-20 ms).
 */
export function controlPaths(root: string): string[] {
  let below = instructionFilesBelow.get(root);
  if (!below) {
    below = findInstructionFiles(root);
    instructionFilesBelow.set(root, below);
  }
  const atRoot = [...CONTROL_FOLDERS, ...CONTROL_ROOT_FILES, ...INSTRUCTION_FILE_NAMES].map((name) => join(root, name));
  return [...new Set([...atRoot, ...below])];
}

function findInstructionFiles(root: string): string[] {
  const patterns = INSTRUCTION_FILE_NAMES.map((name) => `:(glob,icase)**/${name}`);
  const git = buildOwnGit(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...patterns]);
  const listed = runSync('git', git.args, {
    cwd: root,
    env: git.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 16 * 1024 * 1024,
  });
  if (listed.status !== 0 || typeof listed.stdout !== 'string') return []; // not a repository: the root's own are bound all the same
  return [...new Set(listed.stdout.split('\0').filter((path) => path.includes('/')))].map((path) => join(root, path));
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

/** Whether bubblewrap can start a sandbox here; when not, why, and whether it is missing (not installed, or no such thing on this platform) or installed but failing. */
export type Probe = { ok: true } | { ok: false; reason: string; missing: boolean };

let probed: Probe | undefined;
let probing: Promise<Probe> | undefined;

// How long the probe's `bwrap ... true` may take before it counts as failing.
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Whether bubblewrap is installed and can start a sandbox here (checked once per process), without
 * blocking: a run starts it early, so the `bwrap ... true` (7–15 ms, more under load) overlaps the
 * journal's opening instead of adding to the time before the first model request. Its timeout is
 * os/processes.ts's, which holds no reference and goes with the child: a bwrap that is not
 * installed never exits, and spawn's own `timeout` option, cleared only on an exit, once kept a
 * refused run's process alive for ten seconds after it said why.
 */
export function probeSandboxAsync(root: string, gitDirs?: string[]): Promise<Probe> {
  if (probed) return Promise.resolve(probed);
  probing ??= runProcess('bwrap', [...bwrapArgs(root, { kind: 'bwrap' }, gitDirs ?? gitPaths(root), []), '--', 'true'], {
    timeoutMs: PROBE_TIMEOUT_MS,
  }).then((run) => {
    const timedOut = run.timedOut ? ({ message: `no answer within ${PROBE_TIMEOUT_MS / 1000} s` } as NodeJS.ErrnoException) : undefined;
    return (probed ??= probeOutcome((run.error as NodeJS.ErrnoException | undefined) ?? timedOut, run.code, run.stderr.toString('utf8')));
  });
  return probing;
}

/** Whether bubblewrap is installed and can start a sandbox here (checked once per process). */
export function probeSandbox(root: string, gitDirs?: string[]): Probe {
  if (probed) return probed;
  const run = runSync('bwrap', [...bwrapArgs(root, { kind: 'bwrap' }, gitDirs ?? gitPaths(root), []), '--', 'true'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
  });
  probed = probeOutcome(run.error as NodeJS.ErrnoException | undefined, run.status, run.stderr);
  return probed;
}

function probeOutcome(error: NodeJS.ErrnoException | undefined, status: number | null, stderr: string): Probe {
  if (error?.code === 'ENOENT') {
    const reason =
      process.platform === 'linux'
        ? 'bubblewrap (bwrap) is not installed'
        : `bubblewrap (bwrap), the Linux sandbox savepoint confines commands with, does not exist on ${platformName(process.platform)}`;
    return { ok: false, reason, missing: true };
  }
  if (error || status !== 0)
    return {
      ok: false,
      reason: `bubblewrap cannot start a sandbox (${(stderr || error?.message || `exit ${status}`).trim().split('\n')[0]})`,
      missing: false,
    };
  return { ok: true };
}

/**
 * How the person gets a sandbox where none starts, as this platform offers it: the package that
 * installs bubblewrap on this Linux; user namespaces where it is installed but cannot start; where
 * there is no bubblewrap at all (macOS, Windows), a Linux machine or container. A clause: the caller
 * adds the other way out (--no-sandbox).
 */
export function sandboxRemedy(
  probe: { missing: boolean },
  platform: NodeJS.Platform = process.platform,
  osRelease: string = readOsRelease(platform),
): string {
  if (platform !== 'linux') {
    const where =
      platform === 'win32'
        ? 'WSL 2 (a Linux inside Windows) with bubblewrap installed there'
        : 'a Linux virtual machine or container (Lima, Docker, a dev container) with bubblewrap installed';
    return `savepoint's sandbox is bubblewrap, which runs only on Linux, and ${platformName(platform)} has no equivalent savepoint uses: run savepoint in ${where} (or with --no-sandbox inside a virtual machine or container that holds only what the task needs: that machine is then the boundary)`;
  }
  if (!probe.missing) return 'bubblewrap needs unprivileged user namespaces: allow them (in a container, or run savepoint on the host)';
  return `Install bubblewrap (${installCommand(osRelease)}) to confine them`;
}

/** How to install bubblewrap on the Linux that `/etc/os-release` describes: its package manager's command, or the common ones when it is not known. */
export function installCommand(osRelease: string): string {
  const field = (name: string) => (osRelease.match(new RegExp(`^${name}=["']?([^"'\n]*)`, 'm'))?.[1] ?? '').toLowerCase();
  const family = `${field('ID')} ${field('ID_LIKE')}`.split(/\s+/).filter(Boolean);
  const known: Array<[string[], string]> = [
    [['debian', 'ubuntu'], '"apt-get install bubblewrap"'],
    [['fedora', 'rhel', 'centos'], '"dnf install bubblewrap"'],
    [['arch'], '"pacman -S bubblewrap"'],
    [['alpine'], '"apk add bubblewrap"'],
    [['opensuse', 'suse', 'sles'], '"zypper install bubblewrap"'],
    [['nixos'], '"nix-env -iA nixpkgs.bubblewrap"'],
  ];
  for (const id of family)
    for (const [ids, command] of known) if (ids.some((known) => id === known || id.startsWith(`${known}-`))) return command;
  return 'Debian and Ubuntu: "apt-get install bubblewrap"; Fedora: "dnf install bubblewrap"; Arch: "pacman -S bubblewrap"';
}

function readOsRelease(platform: NodeJS.Platform): string {
  if (platform !== 'linux') return '';
  for (const file of ['/etc/os-release', '/usr/lib/os-release']) {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      // the next, or none
    }
  }
  return '';
}

function platformName(platform: NodeJS.Platform): string {
  return (
    ({ darwin: 'macOS', win32: 'Windows', freebsd: 'FreeBSD', openbsd: 'OpenBSD' } as Partial<Record<NodeJS.Platform, string>>)[platform] ??
    platform
  );
}
