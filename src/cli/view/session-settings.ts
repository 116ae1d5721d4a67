// The settings files applied to a command that drives a run, flags last: which model a new run
// takes, how approvals go (defaultMode; --yes over it), the rules every live tool call is checked
// against, and the sandbox's switches. Read before anything runs, so a broken settings file stops
// the command with its name and key and leaves every run as it was.
import { basename } from 'node:path';
import { isSavepointError } from '../../errors/index.js';
import { MCP_CONFIG_FILE } from '../../tools/mcp/index.js';
import { findRepository, type Repository } from '../../git/repository.js';
import {
  findCustomCommands,
  loadSettings,
  permissionRules,
  type CustomCommand,
  type PermissionMode,
  type PermissionRules,
  type Settings,
} from '../../settings/index.js';
import type { DriveFlags } from './drive-flags.js';

/**
 * The names the interactive session's own slash commands answer to, aliases included
 * (interactive/slash-commands.ts parses them): a custom command of one of these names is never
 * used, in the session or by `run`, so that `/help` means one thing everywhere.
 */
export const BUILT_IN_NAMES: ReadonlySet<string> = new Set([
  'help',
  '?',
  'exit',
  'quit',
  'cost',
  'diff',
  'runs',
  'compact',
  'new',
  'model',
  'fork',
]);

/** The settings as one command uses them, flags applied. */
export interface SessionSettings {
  settings: Settings;
  /** The repository root around the current directory, when there is one. */
  root?: string;
  /**
   * The repository around the current directory, as git found it, when there is one: a command
   * hands it to the session (SessionOptions.repository) and an interactive session to each turn,
   * so that git is asked once per process, not again for the journal or at every message.
   */
  repository?: Repository;
  /** The rules in force (a session adds to them: `a` at an approval). */
  rules: PermissionRules;
  /** How a call no rule decides is approved: --yes is 'yes'. */
  mode: PermissionMode;
  /** The model a new run takes when --model is not given (settings' `model`). */
  defaultModel?: string;
  /** The remote a run fetches from first and pushes to when neither --push nor --no-push is given (settings' `remote`). */
  remote?: string;
  network: boolean;
  gitWrites: boolean;
  /**
   * The custom commands found (the repository's marked untrusted in an untrusted folder), a
   * built-in's name left out: the session's own command of that name wins (`shadowed` lists them).
   */
  commands: CustomCommand[];
  /** Custom commands never used because a built-in has their name. */
  shadowed: CustomCommand[];
  /** The MCP servers in force by name (later files win on a name; the repository's only trusted and approved), for the session's `mcpServers`, each with its file; undefined when none. */
  mcpServers?: { servers: Record<string, unknown>; source: Record<string, string> };
}

/**
 * Loads the settings for `dir` (the current directory) and applies `flags` over them; `remembered`
 * are the allow rules `a` added earlier in an interactive session (kept for the rest of it).
 * `repository`: the repository around `dir` as an earlier call found it (an interactive session's
 * folder stays the same), not asked of git again; by default it is found.
 */
export function sessionSettings(
  flags: Pick<DriveFlags, 'yes' | 'allowNetwork' | 'allowGitWrites' | 'trust' | 'allowedTools' | 'disallowedTools'>,
  dir = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
  remembered: readonly string[] = [],
  repository: Repository | undefined = repositoryAround(dir, env),
): SessionSettings {
  const root = repository?.root;
  // --trust trusts the folder's files as they are now, and records it (docs/trust.md).
  const settings = loadSettings(root, env, { trust: Boolean(flags.trust) });
  const rules = permissionRules(settings);
  // The person's rules for this command: their own say-so, as their settings file's are.
  for (const rule of flags.allowedTools ?? []) rules.addGiven('allow', rule, '--allowedTools');
  for (const rule of flags.disallowedTools ?? []) rules.addGiven('deny', rule, '--disallowedTools');
  for (const rule of remembered) rules.addAllow(rule);
  const found = findCustomCommands(root, settings.trust.state !== 'untrusted', env);
  return {
    commands: found.filter((command) => !BUILT_IN_NAMES.has(command.name)),
    shadowed: found.filter((command) => BUILT_IN_NAMES.has(command.name)),
    settings,
    ...(repository ? { root: repository.root, repository } : {}),
    rules,
    mode: flags.yes ? 'yes' : settings.defaultMode.value,
    ...(settings.model ? { defaultModel: settings.model.value } : {}),
    ...(settings.remote ? { remote: settings.remote.value } : {}),
    network: Boolean(flags.allowNetwork) || settings.sandbox.network?.value === true,
    gitWrites: Boolean(flags.allowGitWrites) || settings.sandbox.gitWrites?.value === true,
    ...(mcpServersOf(settings) ? { mcpServers: mcpServersOf(settings)! } : {}),
  };
}

/**
 * The MCP servers in force in the `{ servers, source }` shape the MCP configuration takes (each
 * server named by its file; `.mcp.json` as the MCP messages name it), or undefined when there are none.
 */
export function mcpServersOf(settings: Settings): { servers: Record<string, unknown>; source: Record<string, string> } | undefined {
  const entries = Object.entries(settings.mcpServers);
  if (entries.length === 0) return undefined;
  const source = (file: string) =>
    basename(file) === MCP_CONFIG_FILE && settings.repositoryServers.some((server) => server.source === file) ? MCP_CONFIG_FILE : file;
  return {
    servers: Object.fromEntries(entries.map(([name, server]) => [name, server.value])),
    source: Object.fromEntries(entries.map(([name, server]) => [name, source(server.source)])),
  };
}

/** The repository root around `dir`, or undefined outside one (the command then says so itself). */
export function repositoryRoot(dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return repositoryAround(dir, env)?.root;
}

/** The repository around `dir`, or undefined outside one (the command then says so itself). */
export function repositoryAround(dir: string, env: NodeJS.ProcessEnv = process.env): Repository | undefined {
  try {
    return findRepository(dir, env);
  } catch (error) {
    if (isSavepointError(error)) return undefined;
    throw error;
  }
}
