// The settings in force: the user's file ($XDG_CONFIG_HOME/savepoint/settings.json, default
// ~/.config), the project's .savepoint/settings.json, its .savepoint/settings.local.json (the
// person's own, git-ignored), in that order, each later one overriding the earlier for a single
// value (model, defaultMode, sandbox switches, an MCP server of the same name) and adding to the
// earlier ones' rules. Flags come last, at the caller. Each value remembers the file it came from,
// for `savepoint config`.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SettingsFileError } from '../errors/index.js';
import { buildOwnGit } from '../git/repository.js';
import { PermissionRules } from './permissions.js';
import { readSettingsFile, parseSettings, type McpServerSettings, type PermissionMode } from './settings-file.js';

/** A value and where it came from: a settings file's path, or "flag" / "default". */
export interface Sourced<T> {
  value: T;
  source: string;
}

/** Which settings file: the user's, the project's, or the project's local one. */
export type SettingsScope = 'user' | 'project' | 'local';

/** The merged settings, each value with its source. */
export interface Settings {
  model?: Sourced<string>;
  defaultMode: Sourced<PermissionMode>;
  allow: Sourced<string>[];
  deny: Sourced<string>[];
  sandbox: { network?: Sourced<boolean>; gitWrites?: Sourced<boolean> };
  mcpServers: Record<string, Sourced<McpServerSettings>>;
  /** The files looked at, in order, and whether each was there. */
  files: { scope: SettingsScope; path: string; found: boolean }[];
  /** Keys a file holds that this build does not use. */
  unknownKeys: { file: string; key: string }[];
}

/** The user's settings folder: $XDG_CONFIG_HOME/savepoint, else ~/.config/savepoint. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'savepoint');
}

/** The settings files in the order they apply; the project ones only with a repository root. */
export function settingsFiles(root: string | undefined, env: NodeJS.ProcessEnv = process.env): { scope: SettingsScope; path: string }[] {
  const files: { scope: SettingsScope; path: string }[] = [{ scope: 'user', path: join(userConfigDir(env), 'settings.json') }];
  if (root) files.push({ scope: 'project', path: join(root, '.savepoint', 'settings.json') }, { scope: 'local', path: localSettingsFile(root) });
  return files;
}

/** The project's local settings file, where `a` at an approval writes a rule. */
export function localSettingsFile(root: string): string {
  return join(root, '.savepoint', 'settings.local.json');
}

/** Reads and merges every settings file; throws SettingsFileError for the first one that cannot be used. */
export function loadSettings(root: string | undefined, env: NodeJS.ProcessEnv = process.env): Settings {
  const settings: Settings = { defaultMode: { value: 'ask', source: 'default' }, allow: [], deny: [], sandbox: {}, mcpServers: {}, files: [], unknownKeys: [] };
  for (const { scope, path } of settingsFiles(root, env)) {
    const layer = readSettingsFile(path);
    settings.files.push({ scope, path, found: layer !== undefined });
    if (!layer) continue;
    const from = <T>(value: T): Sourced<T> => ({ value, source: path });
    if (layer.model !== undefined) settings.model = from(layer.model);
    if (layer.permissions?.defaultMode) settings.defaultMode = from(layer.permissions.defaultMode);
    for (const rule of layer.permissions?.allow ?? []) settings.allow.push(from(rule));
    for (const rule of layer.permissions?.deny ?? []) settings.deny.push(from(rule));
    if (layer.sandbox?.network !== undefined) settings.sandbox.network = from(layer.sandbox.network);
    if (layer.sandbox?.gitWrites !== undefined) settings.sandbox.gitWrites = from(layer.sandbox.gitWrites);
    for (const [name, server] of Object.entries(layer.mcpServers ?? {})) settings.mcpServers[name] = from(server);
    for (const key of layer.unknownKeys) settings.unknownKeys.push({ file: path, key });
  }
  return settings;
}

/**
 * The rules of `settings` as a matcher (a session may add to it: `a` at an approval), each with the
 * file and scope it came from (only the user's own rules may allow a write to a file that decides
 * what runs); path rules resolve paths in `root`, by default the repository whose settings were read.
 */
export function permissionRules(settings: Settings, root = settingsRoot(settings)): PermissionRules {
  const scopes = new Map(settings.files.map((file) => [file.path, file.scope]));
  const entries = (rules: Sourced<string>[]) => rules.map((r) => ({ rule: r.value, source: r.source, ...(scopes.has(r.source) ? { scope: scopes.get(r.source)! } : {}) }));
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
export function addLocalAllowRule(root: string, rule: string): string {
  const file = localSettingsFile(root);
  let current: Record<string, unknown> = {};
  try {
    const text = readFileSync(file, 'utf8');
    if (text.trim()) current = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new SettingsFileError(file, `cannot be read to add a rule (${(error as Error).message})`);
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
    return execFileSync('git', own.args, { cwd: root, env: own.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
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
    appendFileSync(exclude, `${current && !current.endsWith('\n') ? '\n' : ''}# savepoint's local settings: the person's own (docs/settings.md)\n/${LOCAL_SETTINGS_PATH}\n`);
  } catch {
    // The rule is written; only its ignoring failed, which git status will show.
  }
}
