// One settings file (user, project or local), read and checked key by key. A file that is missing
// is no settings; a file that is there must be a JSON object whose known keys have the right
// shapes, else SettingsFileError names the file and the key before anything runs. Keys this build
// does not know are kept aside (`savepoint config` lists them) rather than refused, so that a
// settings file shared with a newer build, or copied from another tool, still works.
// Tested in test/settings/permissions.test.ts.
import { readFileSync, statSync } from 'node:fs';
import { SettingsFileError } from '../errors/index.js';
import { parseRule } from './permissions.js';
import { DEFAULT_HOOK_TIMEOUT, HOOK_EVENTS, type HookEvent } from '../tools/hook-command.js';

/** How a step that no rule decides is approved: ask each time, approve edits and writes, or approve everything. */
export type PermissionMode = 'ask' | 'acceptEdits' | 'yes';

/** The permission modes, as settings and docs spell them. */
export const PERMISSION_MODES: readonly PermissionMode[] = ['ask', 'acceptEdits', 'yes'];

/** An MCP server as settings (and `.mcp.json`) describe it: a command to start, or an HTTP endpoint. Passed through to whoever starts servers. */
export type McpServerSettings =
  | { command: string; args?: string[]; env?: Record<string, string>; network?: boolean }
  | { type: 'http' | 'sse'; url: string; headers?: Record<string, string> };

/** What one settings file says, checked. */
export interface SettingsLayer {
  model?: string;
  /** The git remote `run`, `resume` and `continue` fetch the journal from first and push it to as they go (as `--push <remote>`). */
  remote?: string;
  permissions?: { allow?: string[]; deny?: string[]; defaultMode?: PermissionMode };
  sandbox?: { network?: boolean; gitWrites?: boolean };
  mcpServers?: Record<string, McpServerSettings>;
  /** Folders the person trusts (absolute, `~/` for their home; `/**` at the end for every folder under one): read from the user's file only. */
  trustedFolders?: string[];
  /** Hooks, in Claude Code's format, flattened: one per command, in the order written. */
  hooks?: HookSettings[];
  /** Top-level keys this build does not know, left unused. */
  unknownKeys: string[];
}

/** One hook command of a settings file: its event, the matcher it is under, the command and its timeout (seconds). */
export interface HookSettings {
  event: HookEvent;
  matcher: string;
  command: string;
  timeout: number;
}

/** The longest timeout a hook may name, in seconds: an hour. */
export const MAX_HOOK_TIMEOUT = 3600;

/** The largest settings file read: a settings file is a few hundred bytes, anything this big is a mistake. */
export const MAX_SETTINGS_BYTES = 1024 * 1024;

const KNOWN_KEYS = new Set(['model', 'remote', 'permissions', 'sandbox', 'mcpServers', 'trustedFolders', 'hooks', '$schema']);

/** The settings in `file`, or undefined when there is no such file. Throws SettingsFileError for a file that cannot be used. */
export function readSettingsFile(file: string): SettingsLayer | undefined {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new SettingsFileError(file, 'is not a regular file');
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error instanceof SettingsFileError ? error : new SettingsFileError(file, `cannot be read (${(error as Error).message})`);
  }
  if (size > MAX_SETTINGS_BYTES)
    throw new SettingsFileError(file, `is ${size} bytes, more than the ${MAX_SETTINGS_BYTES} a settings file may have`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SettingsFileError(file, `cannot be read (${(error as Error).message})`);
  }
  if (!text.trim()) return { unknownKeys: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SettingsFileError(file, `is not valid JSON (${(error as Error).message})`);
  }
  return parseSettings(parsed, file);
}

/** Checks parsed JSON as settings; `file` names it in errors. */
export function parseSettings(value: unknown, file: string): SettingsLayer {
  if (!isObject(value)) throw new SettingsFileError(file, 'must hold a JSON object ({ "model": ..., "permissions": ... })');
  const layer: SettingsLayer = { unknownKeys: Object.keys(value).filter((key) => !KNOWN_KEYS.has(key)) };
  const bad = (key: string, problem: string) => new SettingsFileError(file, problem, key);
  if (value.model !== undefined) {
    if (typeof value.model !== 'string' || !value.model.trim()) throw bad('model', 'must be a model id (a non-empty string)');
    layer.model = value.model.trim();
  }
  if (value.remote !== undefined) {
    // A remote's name as git takes it, never an option (it reaches git's command line).
    if (typeof value.remote !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9._/-]{0,99}$/.test(value.remote) || value.remote.includes('..')) {
      throw bad('remote', 'must be the name of a git remote, such as "origin"');
    }
    layer.remote = value.remote;
  }
  if (value.permissions !== undefined) {
    const p = value.permissions;
    if (!isObject(p)) throw bad('permissions', 'must be an object with "allow", "deny" and "defaultMode"');
    const permissions: NonNullable<SettingsLayer['permissions']> = {};
    for (const list of ['allow', 'deny'] as const) {
      if (p[list] === undefined) continue;
      const rules = p[list];
      if (!Array.isArray(rules)) throw bad(`permissions.${list}`, 'must be a list of rules such as "run_bash(npm test*)"');
      permissions[list] = rules.map((rule, i) => {
        const problem = typeof rule === 'string' ? parseRule(rule).problem : 'is not a string';
        if (problem) throw bad(`permissions.${list}[${i}]`, problem);
        return (rule as string).trim();
      });
    }
    if (p.defaultMode !== undefined) {
      if (!PERMISSION_MODES.includes(p.defaultMode as PermissionMode))
        throw bad('permissions.defaultMode', `must be one of ${PERMISSION_MODES.join(', ')}`);
      permissions.defaultMode = p.defaultMode as PermissionMode;
    }
    layer.permissions = permissions;
  }
  if (value.sandbox !== undefined) {
    const s = value.sandbox;
    if (!isObject(s)) throw bad('sandbox', 'must be an object with "network" and "gitWrites"');
    const sandbox: NonNullable<SettingsLayer['sandbox']> = {};
    for (const key of ['network', 'gitWrites'] as const) {
      if (s[key] === undefined) continue;
      if (typeof s[key] !== 'boolean') throw bad(`sandbox.${key}`, 'must be true or false');
      sandbox[key] = s[key] as boolean;
    }
    layer.sandbox = sandbox;
  }
  if (value.trustedFolders !== undefined) {
    const folders = value.trustedFolders;
    if (
      !Array.isArray(folders) ||
      !folders.every((folder) => typeof folder === 'string' && (folder.startsWith('/') || folder.startsWith('~/')))
    ) {
      throw bad('trustedFolders', 'must be a list of absolute folder paths (or ~/…), such as "~/work/**"');
    }
    layer.trustedFolders = folders as string[];
  }
  if (value.mcpServers !== undefined) {
    const servers = value.mcpServers;
    if (!isObject(servers)) throw bad('mcpServers', 'must be an object of servers by name');
    for (const [name, server] of Object.entries(servers)) {
      const problem = serverProblem(name, server);
      if (problem) throw bad(`mcpServers.${name}`, problem);
    }
    layer.mcpServers = servers as Record<string, McpServerSettings>;
  }
  if (value.hooks !== undefined) layer.hooks = parseHooks(value.hooks, (key, problem) => bad(key, problem));
  return layer;
}

// `hooks` in Claude Code's shape: { "<event>": [ { "matcher": "...", "hooks": [ { "type": "command", "command": "...", "timeout": 60 } ] } ] }.
// Everything is checked, so that a hook written wrong is said before anything runs, never ignored.
function parseHooks(value: unknown, bad: (key: string, problem: string) => Error): HookSettings[] {
  const shape = '{"PreToolUse": [{"matcher": "run_bash", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}';
  if (!isObject(value)) throw bad('hooks', `must be an object of hook events, as Claude Code writes it: ${shape}`);
  const hooks: HookSettings[] = [];
  for (const [event, groups] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event))
      throw bad(`hooks.${event}`, `is not a hook event savepoint runs: it runs ${HOOK_EVENTS.join(', ')}`);
    if (!Array.isArray(groups)) throw bad(`hooks.${event}`, `must be a list of matchers, each with its "hooks": ${shape}`);
    groups.forEach((group: unknown, g) => {
      const at = `hooks.${event}[${g}]`;
      if (!isObject(group)) throw bad(at, 'must be an object with a "matcher" and its "hooks" (a list of commands)');
      const matcher = group.matcher ?? '';
      if (typeof matcher !== 'string')
        throw bad(`${at}.matcher`, 'must be a string: a tool name, names separated by "|", a regular expression, or "*" for every tool');
      const problem = matcherProblem(matcher);
      if (problem) throw bad(`${at}.matcher`, problem);
      for (const key of Object.keys(group))
        if (key !== 'matcher' && key !== 'hooks')
          throw bad(`${at}.${key}`, 'is not part of a hook matcher: it holds "matcher" and "hooks"');
      if (!Array.isArray(group.hooks))
        throw bad(`${at}.hooks`, 'must be a list of commands such as {"type": "command", "command": "./check.sh"}');
      group.hooks.forEach((hook: unknown, h) => {
        const here = `${at}.hooks[${h}]`;
        if (!isObject(hook)) throw bad(here, 'must be an object such as {"type": "command", "command": "./check.sh", "timeout": 60}');
        if (hook.type !== 'command') throw bad(`${here}.type`, 'must be "command": savepoint runs command hooks only');
        if (typeof hook.command !== 'string' || !hook.command.trim())
          throw bad(`${here}.command`, 'must be a command to run (a non-empty string)');
        const timeout = hook.timeout ?? DEFAULT_HOOK_TIMEOUT;
        if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_HOOK_TIMEOUT)
          throw bad(`${here}.timeout`, `must be a number of seconds above 0 and at most ${MAX_HOOK_TIMEOUT}`);
        for (const key of Object.keys(hook))
          if (!['type', 'command', 'timeout'].includes(key))
            throw bad(`${here}.${key}`, 'is not part of a command hook: it holds "type", "command" and "timeout"');
        hooks.push({ event: event as HookEvent, matcher, command: hook.command, timeout });
      });
    });
  }
  return hooks;
}

// Whether a matcher compiles as the regular expression it is read as (a whole-name match).
function matcherProblem(matcher: string): string | undefined {
  if (matcher === '' || matcher === '*') return undefined;
  try {
    new RegExp(`^(?:${matcher})$`);
    return undefined;
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message}): write a tool name such as "run_bash", names separated by "|", or "*" for every tool`;
  }
}

// What is wrong with one MCP server's entry, if anything (its fields' types; the MCP code does the rest).
function serverProblem(name: string, server: unknown): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) return 'has a name that is not letters, digits, "_" or "-" (it becomes part of tool names)';
  if (!isObject(server)) return 'must be an object: {"command", "args", "env"} or {"type": "http", "url", "headers"}';
  const strings = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === 'string');
  if (server.type === 'http' || server.type === 'sse') {
    if (typeof server.url !== 'string' || !server.url) return 'needs a "url" (a string)';
    if (server.headers !== undefined && !strings(server.headers)) return 'has "headers" that are not an object of strings';
    if (server.network !== undefined)
      return 'has "network", which is for servers savepoint starts (a command): a server over HTTP runs elsewhere';
    return undefined;
  }
  if (server.type !== undefined && server.type !== 'stdio') return `has a "type" other than "stdio", "http" or "sse"`;
  if (typeof server.command !== 'string' || !server.command) return 'needs a "command" (a string), or "type": "http" with a "url"';
  if (server.args !== undefined && !(Array.isArray(server.args) && server.args.every((a) => typeof a === 'string')))
    return 'has "args" that are not a list of strings';
  if (server.env !== undefined && !strings(server.env)) return 'has an "env" that is not an object of strings';
  if (server.network !== undefined && typeof server.network !== 'boolean')
    return 'has "network" that is not true or false (true: its sandbox keeps the network)';
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
