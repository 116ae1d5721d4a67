// The settings in force: the user's file ($XDG_CONFIG_HOME/savepoint/settings.json, default
// ~/.config), the project's .savepoint/settings.json, its .savepoint/settings.local.json, in that
// order, each later one overriding the earlier for a single value (model, defaultMode, sandbox
// switches, an MCP server of the same name) and adding to the earlier ones' rules; `.mcp.json`'s
// servers come first of all (any settings file wins on a name). Flags come last, at the caller.
// Each value remembers the file it came from, for `savepoint config`.
// Trust (SPEC, Trust; docs/trust.md): what the repository brings (its two settings files and
// `.mcp.json`) is the person's only once they trust the folder. Until then it may narrow what runs
// and never widen it: its deny rules, its model, a defaultMode or sandbox switch that narrows apply;
// its allow rules, a defaultMode that widens, sandbox lifts, MCP servers and hooks are left out, each
// listed in `leftOut` with its file. In a trusted folder, each MCP server the repository names
// still needs the person's approval (by its configuration's digest) before it is in force.
// Tested in test/settings/trust.test.ts and test/cli/settings.test.ts.
import { outputSync } from '../os/processes.js';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SettingsFileError } from '../errors/index.js';
import { buildOwnGit } from '../git/repository.js';
import { userConfigDir } from './config-dir.js';
import { findCustomCommands } from './custom-commands.js';
import { PermissionRules } from './permissions.js';
import { expandedVariables, readMcpJsonServers, repositoryFiles, serverDigest } from './repository-files.js';
import {
  readSettingsFile,
  parseSettings,
  PERMISSION_MODES,
  type HookSettings,
  type McpServerSettings,
  type PermissionMode,
} from './settings-file.js';
import type { HookDefinition } from '../tools/hook-command.js';
import { folderKey, folderRecord, recordTrust } from './trust-store.js';

export { userConfigDir } from './config-dir.js';

/** A value and where it came from: a settings file's path, or "flag" / "default". */
export interface Sourced<T> {
  value: T;
  source: string;
}

/** Which settings file: the user's, the project's, or the project's local one. */
export type SettingsScope = 'user' | 'project' | 'local';

/**
 * Whether the repository's own files are in force: it has none (nothing to trust), the person
 * trusts them as they are now (recorded with this digest, or --trust), or not (they only narrow).
 */
export interface FolderTrust {
  state: 'nothing-to-trust' | 'trusted' | 'untrusted';
  /** The repository root's real path (the trust store's key); none outside a repository. */
  folder?: string;
  /** The files that decide what runs, found (relative paths). */
  files: string[];
  /** Their digest now; none when there are no such files. */
  digest?: string;
  /** What trusts it: the trust store (the same digest), --trust now, or `trustedFolders` in the user's settings. */
  by?: 'record' | 'flag' | 'settings';
}

/** Something a repository's file holds that is not in force, and why: the folder is not trusted, or an MCP server is not approved. */
export interface LeftOut {
  /** As a person reads it: `allow rule "run_bash"`, `defaultMode "yes"`, `sandbox.network`, `MCP server "db"`, `PreToolUse hook on "run_bash"`. */
  what: string;
  /** The file it is in. */
  source: string;
  why: 'untrusted' | 'unapproved';
  /** For an MCP server: its name. */
  server?: string;
  /** For a hook: its event, matcher and command, as written. */
  hook?: HookSettings;
}

/** An MCP server the repository names (`.mcp.json` or its settings), as written, and whether the person approved it. */
export interface RepositoryServer {
  name: string;
  /** Its configuration as written (`${VAR}` not expanded). */
  config: Record<string, unknown>;
  source: string;
  /** The digest of its configuration and the variables it expands: what approving it approves. */
  digest: string;
  /** The names of the person's variables it expands through `${VAR}`. */
  variables: string[];
  /** The person approved this configuration of it (savepoint mcp approve, or at the trust question). */
  approved: boolean;
  /** It is in force: the folder is trusted and the server approved. */
  inForce: boolean;
}

/** The merged settings, each value with its source. */
export interface Settings {
  model?: Sourced<string>;
  /** The remote whose journal is fetched first and pushed to as a run goes (`--push <remote>`'s default). */
  remote?: Sourced<string>;
  defaultMode: Sourced<PermissionMode>;
  allow: Sourced<string>[];
  deny: Sourced<string>[];
  sandbox: { network?: Sourced<boolean>; gitWrites?: Sourced<boolean> };
  /** The MCP servers in force, by name: the user's, and the repository's that are trusted and approved. */
  mcpServers: Record<string, Sourced<McpServerSettings>>;
  /** The hooks in force, in order: the person's own (unconfined), then the repository's when it is trusted (sandboxed). */
  hooks: HookDefinition[];
  /** The files looked at, in order, and whether each was there. */
  files: { scope: SettingsScope; path: string; found: boolean }[];
  /** Keys a file holds that this build does not use. */
  unknownKeys: { file: string; key: string }[];
  /** Whether the repository's own files are in force. */
  trust: FolderTrust;
  /** What the repository's files hold that is not in force, each with its file and why. */
  leftOut: LeftOut[];
  /** Every MCP server the repository names (the one a name resolves to), approved or not. */
  repositoryServers: RepositoryServer[];
}

/** How loadSettings decides trust. */
export interface LoadSettingsOptions {
  /**
   * The person trusts the folder now (`--trust`): its files are in force, and the trust is recorded
   * with their digest. Default: trusted only when the trust store holds the same digest.
   */
  trust?: boolean;
  /** The user's `trustedFolders` (loadSettings reads them from the user's file). */
  trustedFolders?: string[];
}

/** The settings files in the order they apply; the project ones only with a repository root. */
export function settingsFiles(root: string | undefined, env: NodeJS.ProcessEnv = process.env): { scope: SettingsScope; path: string }[] {
  const files: { scope: SettingsScope; path: string }[] = [{ scope: 'user', path: join(userConfigDir(env), 'settings.json') }];
  if (root)
    files.push({ scope: 'project', path: join(root, '.savepoint', 'settings.json') }, { scope: 'local', path: localSettingsFile(root) });
  return files;
}

/** The project's local settings file, where `a` at an approval writes a rule. */
export function localSettingsFile(root: string): string {
  return join(root, '.savepoint', 'settings.local.json');
}

/**
 * Reads and merges every settings file and `.mcp.json`, the repository's narrowing-only unless the
 * folder is trusted; throws SettingsFileError (McpConfigError) for the first file that cannot be used.
 */
export function loadSettings(root: string | undefined, env: NodeJS.ProcessEnv = process.env, options: LoadSettingsOptions = {}): Settings {
  // The user's file first: its `trustedFolders` may trust this folder (a repository's own files cannot).
  const userFile = settingsFiles(root, env)[0]!.path;
  const trustedFolders = readSettingsFile(userFile)?.trustedFolders;
  const trust = folderTrust(root, env, { ...options, ...(trustedFolders ? { trustedFolders } : {}) });
  const trusted = trust.state !== 'untrusted';
  const settings: Settings = {
    defaultMode: { value: 'ask', source: 'default' },
    allow: [],
    deny: [],
    sandbox: {},
    mcpServers: {},
    hooks: [],
    files: [],
    unknownKeys: [],
    trust,
    leftOut: [],
    repositoryServers: [],
  };
  const leaveOut = (what: string, source: string) => settings.leftOut.push({ what, source, why: 'untrusted' });
  // Every definition of each MCP server name, in the order they apply (.mcp.json first).
  const servers = new Map<string, Array<{ value: Record<string, unknown>; source: string; repository: boolean }>>();
  const define = (name: string, value: unknown, source: string, repository: boolean) => {
    servers.set(name, [...(servers.get(name) ?? []), { value: value as Record<string, unknown>, source, repository }]);
  };
  if (root) for (const [name, value] of Object.entries(readMcpJsonServers(root) ?? {})) define(name, value, join(root, '.mcp.json'), true);
  for (const { scope, path } of settingsFiles(root, env)) {
    const layer = readSettingsFile(path);
    settings.files.push({ scope, path, found: layer !== undefined });
    if (!layer) continue;
    const repository = scope !== 'user';
    const inForce = !repository || trusted;
    const from = <T>(value: T): Sourced<T> => ({ value, source: path });
    if (layer.model !== undefined) settings.model = from(layer.model);
    // Pushing sends the journal out with the person's credentials: the repository's to ask only once trusted.
    if (layer.remote !== undefined && inForce) settings.remote = from(layer.remote);
    else if (layer.remote !== undefined) leaveOut(`remote "${layer.remote}"`, path);
    const mode = layer.permissions?.defaultMode;
    if (mode && (inForce || narrows(mode, settings.defaultMode.value))) settings.defaultMode = from(mode);
    else if (mode) leaveOut(`defaultMode "${mode}"`, path);
    for (const rule of layer.permissions?.allow ?? []) {
      if (inForce) settings.allow.push(from(rule));
      else leaveOut(`allow rule "${rule}"`, path);
    }
    for (const rule of layer.permissions?.deny ?? []) settings.deny.push(from(rule));
    for (const key of ['network', 'gitWrites'] as const) {
      const value = layer.sandbox?.[key];
      if (value === undefined) continue;
      // false narrows (commands keep to the sandbox); true is a lift, the person's to give.
      if (inForce || value === false) settings.sandbox[key] = from(value);
      else leaveOut(`sandbox.${key}`, path);
    }
    for (const [name, server] of Object.entries(layer.mcpServers ?? {})) define(name, server, path, repository);
    // Only the person's own file says which folders they trust.
    if (repository && layer.trustedFolders) settings.unknownKeys.push({ file: path, key: 'trustedFolders' });
    // A repository's hooks are commands it would run: the person's only once they trust it.
    for (const hook of layer.hooks ?? []) {
      if (inForce) settings.hooks.push({ ...hook, source: path, sandboxed: repository });
      else
        settings.leftOut.push({
          what: `${hook.event} hook${hook.matcher ? ` on "${hook.matcher}"` : ''}`,
          source: path,
          why: 'untrusted',
          hook,
        });
    }
    for (const key of layer.unknownKeys) settings.unknownKeys.push({ file: path, key });
  }
  // The repository's custom commands tell the model what to do: in force only in a trusted folder.
  if (root && !trusted) {
    const untrusted = findCustomCommands(root, false, env).filter((command) => command.untrusted);
    for (const source of new Set(untrusted.map((command) => dirname(command.file)))) {
      const names = untrusted.filter((command) => dirname(command.file) === source).map((command) => `/${command.name}`);
      leaveOut(
        `custom command${names.length === 1 ? '' : 's'} ${names.slice(0, 4).join(', ')}${names.length > 4 ? ` and ${names.length - 4} more` : ''}`,
        source,
      );
    }
  }
  const approvals = root && trust.folder ? (folderRecord(root, env).servers ?? {}) : {};
  for (const [name, definitions] of servers) {
    const top = definitions.at(-1)!;
    const own = definitions.filter((d) => !d.repository).at(-1);
    if (!top.repository) {
      settings.mcpServers[name] = { value: top.value as McpServerSettings, source: top.source };
      continue;
    }
    const digest = serverDigest(top.value);
    const approved = approvals[name]?.digest === digest;
    const inForce = trusted && approved;
    settings.repositoryServers.push({
      name,
      config: top.value,
      source: top.source,
      digest,
      variables: expandedVariables(top.value),
      approved,
      inForce,
    });
    if (inForce) settings.mcpServers[name] = { value: top.value as McpServerSettings, source: top.source };
    else {
      settings.leftOut.push({ what: `MCP server "${name}"`, source: top.source, why: trusted ? 'unapproved' : 'untrusted', server: name });
      // The person's own server of that name stays in force.
      if (own) settings.mcpServers[name] = { value: own.value as McpServerSettings, source: own.source };
    }
  }
  return settings;
}

/**
 * Whether the repository at `root` is trusted now: it has no files that decide what runs, the
 * person trusts it now (`options.trust`, recorded with the files' digest), or the store holds the
 * files' digest as they are now. Anything else (never trusted, or changed since) is untrusted.
 */
export function folderTrust(
  root: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadSettingsOptions = {},
): FolderTrust {
  if (!root) return { state: 'nothing-to-trust', files: [] };
  const folder = folderKey(root);
  const { files, digest } = repositoryFiles(root);
  if (!digest) return { state: 'nothing-to-trust', folder, files };
  if (options.trust) {
    if (folderRecord(root, env).digest !== digest) recordTrust(root, digest, env);
    return { state: 'trusted', folder, files, digest, by: 'flag' };
  }
  if (folderRecord(root, env).digest === digest) return { state: 'trusted', folder, files, digest, by: 'record' };
  if (options.trustedFolders?.some((pattern) => folderMatches(folder, pattern, env)))
    return { state: 'trusted', folder, files, digest, by: 'settings' };
  return { state: 'untrusted', folder, files, digest };
}

// Whether `folder` (a real path) is `pattern` of the user's trustedFolders, or under it for a pattern ending in `/**`.
function folderMatches(folder: string, pattern: string, env: NodeJS.ProcessEnv): boolean {
  const expanded = pattern.startsWith('~/') ? join(env.HOME || homedir(), pattern.slice(2)) : pattern;
  const under = expanded.endsWith('/**');
  const base = folderKey(under ? expanded.slice(0, -3) || '/' : expanded.replace(/\/+$/, '') || '/');
  return folder === base || (under && folder.startsWith(base.endsWith('/') ? base : `${base}/`));
}

// A repository's defaultMode applies unasked only when it asks at least as often as the mode before it.
function narrows(mode: PermissionMode, current: PermissionMode): boolean {
  return PERMISSION_MODES.indexOf(mode) <= PERMISSION_MODES.indexOf(current);
}

/**
 * The rules of `settings` as a matcher (a session may add to it: `a` at an approval), each with the
 * file and scope it came from (only the user's own rules may allow a write to a file that decides
 * what runs); path rules resolve paths in `root`, by default the repository whose settings were read.
 */
export function permissionRules(settings: Settings, root = settingsRoot(settings)): PermissionRules {
  const scopes = new Map(settings.files.map((file) => [file.path, file.scope]));
  const entries = (rules: Sourced<string>[]) =>
    rules.map((r) => ({ rule: r.value, source: r.source, ...(scopes.has(r.source) ? { scope: scopes.get(r.source)! } : {}) }));
  return new PermissionRules({ allow: entries(settings.allow), deny: entries(settings.deny), ...(root ? { root } : {}) });
}

// The repository root the project's settings file was looked for in (settingsFiles: <root>/.savepoint/settings.json).
function settingsRoot(settings: Settings): string | undefined {
  const project = settings.files.find((file) => file.scope === 'project');
  return project ? dirname(dirname(project.path)) : undefined;
}

/**
 * Adds an allow rule to the project's local settings file, keeping everything else in it. The file
 * is checked first (a broken one is named, not overwritten) and replaced whole (temp file, rename),
 * and kept out of git (see keepOutOfGit).
 */
export function addLocalAllowRule(root: string, rule: string, env: NodeJS.ProcessEnv = process.env): string {
  const file = localSettingsFile(root);
  // The person asked for this write: a folder they trusted (or that had nothing to trust) stays
  // trusted with it. Only a trust that held just before it carries over, so that a file a command
  // planted meanwhile is not taken in with it.
  const before = folderTrust(root, env);
  let current: Record<string, unknown> = {};
  try {
    const text = readFileSync(file, 'utf8');
    if (text.trim()) current = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new SettingsFileError(file, `cannot be read to add a rule (${(error as Error).message})`);
  }
  parseSettings(current, file);
  const permissions = { ...((current.permissions as Record<string, unknown> | undefined) ?? {}) };
  const allow = [...((permissions.allow as string[] | undefined) ?? [])];
  if (!allow.includes(rule)) allow.push(rule);
  const next = { ...current, permissions: { ...permissions, allow } };
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temp, file);
  keepOutOfGit(root);
  if (before.state !== 'untrusted') {
    const after = repositoryFiles(root).digest;
    if (after) recordTrust(root, after, env);
  }
  return file;
}

// The local settings file's path from the repository root, as git's ignore rules name it.
const LOCAL_SETTINGS_PATH = '.savepoint/settings.local.json';

// Makes git ignore the local settings file when nothing ignores it yet, as Claude Code does for its
// own: the person's rules are theirs, not the project's, and an untracked file there would be a
// run's change (in its checkpoints and `savepoint diff`) though savepoint wrote it. The path goes
// into the repository's own `info/exclude` (for a linked worktree, the shared one), which changes no
// tracked file. Best effort: where git cannot say or the file cannot be written, the rule stays written.
function keepOutOfGit(root: string): void {
  const git = (args: string[]) => {
    const own = buildOwnGit(args);
    return outputSync('git', own.args, { cwd: root, env: own.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  };
  try {
    git(['check-ignore', '-q', '--', LOCAL_SETTINGS_PATH]);
    return; // ignored already (a .gitignore, the exclude file, core.excludesFile)
  } catch (error) {
    if ((error as { status?: number }).status !== 1) return;
  }
  try {
    const exclude = resolve(root, git(['rev-parse', '--git-path', 'info/exclude']).trim());
    let current = '';
    try {
      current = readFileSync(exclude, 'utf8');
    } catch {
      mkdirSync(dirname(exclude), { recursive: true });
    }
    appendFileSync(
      exclude,
      `${current && !current.endsWith('\n') ? '\n' : ''}# savepoint's local settings: the person's own (docs/settings.md)\n/${LOCAL_SETTINGS_PATH}\n`,
    );
  } catch {
    // The rule is written; only its ignoring failed, which git status will show.
  }
}
