// Which MCP servers a run may use: `.mcp.json` at the repository root, in Claude Code's format,
// merged with an `mcpServers` object the caller hands in (settings files), which wins on a name
// both define. Both are input from outside: every key is checked, and a bad one stops the command
// with a message naming the file and the key, before anything runs.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { McpConfigError } from '../../errors/index.js';

/** The file at the repository root that lists a project's MCP servers. */
export const MCP_CONFIG_FILE = '.mcp.json';

/** The largest `.mcp.json` read: a configuration, not a data file. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Server names become part of tool names (`mcp__<server>__<tool>`), which the API limits to these characters. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A server savepoint starts itself and talks to over its stdin and stdout. */
export interface McpStdioServer {
  name: string;
  type: 'stdio';
  command: string;
  args: string[];
  /** Added to a small default environment (PATH, HOME, …), as the SDK does. */
  env: Record<string, string>;
  /** Its sandbox keeps the network (`"network": true`), given in the person's settings only, never by `.mcp.json`. */
  network?: boolean;
  /** Where it was configured, for messages: `.mcp.json` or the settings file. */
  source: string;
}

/** A server already running somewhere, reached over Streamable HTTP. */
export interface McpHttpServer {
  name: string;
  type: 'http';
  url: string;
  headers: Record<string, string>;
  source: string;
}

/** One configured MCP server. */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** What loadMcpServers reads besides the repository. */
export interface LoadMcpOptions {
  /** Servers from settings (`mcpServers`), with the file they came from (one for all, or one per name); they win over `.mcp.json`. */
  given?: { servers: unknown; source: string | Record<string, string> };
  /** false: `.mcp.json` is not read (its servers are the repository's, started only once trusted: the caller passes those in `given`). Default true. */
  readMcpJson?: boolean;
  /** What `${VAR}` and `${VAR:-default}` in a server's configuration expand to. Default: process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The MCP servers configured for the repository at `root`, by name (none when there is no `.mcp.json`). */
export function loadMcpServers(root: string, options: LoadMcpOptions = {}): Map<string, McpServerConfig> {
  const env = options.env ?? process.env;
  const servers = new Map<string, McpServerConfig>();
  const file = join(root, MCP_CONFIG_FILE);
  const fromFile = options.readMcpJson === false ? undefined : readConfigFile(file);
  if (fromFile !== undefined) for (const server of parseMcpServers(fromFile, MCP_CONFIG_FILE, env)) servers.set(server.name, server);
  const given = options.given;
  if (given?.servers !== undefined) {
    if (typeof given.source === 'string')
      for (const server of parseMcpServers({ mcpServers: given.servers }, given.source, env)) servers.set(server.name, server);
    else if (isObject(given.servers)) {
      // Each server named by the file it came from (a repository's `.mcp.json` or a settings file).
      const sources = given.source;
      for (const [name, entry] of Object.entries(given.servers))
        for (const server of parseMcpServers({ mcpServers: { [name]: entry } }, sources[name] ?? 'settings (mcpServers)', env))
          servers.set(server.name, server);
    } else parseMcpServers({ mcpServers: given.servers }, 'settings (mcpServers)', env);
  }
  return servers;
}

function readConfigFile(file: string): unknown {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new McpConfigError(MCP_CONFIG_FILE, '', 'is not a regular file');
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (size > MAX_CONFIG_BYTES)
    throw new McpConfigError(MCP_CONFIG_FILE, '', `is ${size} bytes, more than the ${MAX_CONFIG_BYTES} a configuration may have`);
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(MCP_CONFIG_FILE, '', `is not valid JSON (${(error as Error).message})`);
  }
}

/** The servers of a parsed `{"mcpServers": {...}}` object from `source`, each checked. */
export function parseMcpServers(value: unknown, source: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  if (!isObject(value)) throw new McpConfigError(source, '', 'must hold a JSON object');
  const entries = value.mcpServers;
  if (entries === undefined) return [];
  if (!isObject(entries)) throw new McpConfigError(source, '', 'has "mcpServers" that is not an object of servers by name');
  return Object.entries(entries).map(([name, entry]) => parseServer(name, entry, source, env));
}

function parseServer(name: string, given: unknown, source: string, env: NodeJS.ProcessEnv): McpServerConfig {
  const fail = (problem: string): never => {
    throw new McpConfigError(source, name.slice(0, 80), problem);
  };
  if (!SERVER_NAME.test(name))
    fail('is not a valid server name: use 1–64 letters, digits, "_" or "-" (it becomes part of the tool names, mcp__<server>__<tool>)');
  if (!isObject(given)) fail('is not an object ({"command": …} or {"type": "http", "url": …})');
  const entry = given as Record<string, unknown>;
  const expand = (text: string, key: string) =>
    expandVariables(text, env, (variable) =>
      fail(`uses \${${variable}} in "${key}", and that variable is not set (give a default: \${${variable}:-value})`),
    );
  const type = entry.type ?? (entry.url !== undefined ? 'http' : 'stdio');
  if (type === 'stdio') {
    if (typeof entry.command !== 'string' || entry.command.trim() === '')
      fail('needs "command", the program to start (a non-empty string)');
    const args = entry.args ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) fail('has "args" that is not a list of strings');
    if (entry.network !== undefined && typeof entry.network !== 'boolean') fail('has "network" that is not true or false');
    // The network is the person's to give: a repository's file naming it for its own server would
    // let that server send what it reads (the sandbox reads everything) anywhere.
    if (entry.network === true && source === MCP_CONFIG_FILE)
      fail(
        `gives itself "network" in ${MCP_CONFIG_FILE}, the repository's file: only your own settings give a server the network (this server's entry, with "network": true, in .savepoint/settings.local.json or ~/.config/savepoint/settings.json)`,
      );
    const network = entry.network === true ? { network: true } : {};
    return {
      name,
      type: 'stdio',
      command: expand(entry.command as string, 'command'),
      args: (args as string[]).map((arg) => expand(arg, 'args')),
      env: stringMap(entry.env, 'env', fail, expand),
      ...network,
      source,
    };
  }
  if (type === 'http' || type === 'streamable-http') {
    if (typeof entry.url !== 'string') fail('needs "url", the server\'s address (a string)');
    const url = expand(entry.url as string, 'url');
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      fail(`has a "url" that is not an address: "${url.slice(0, 200)}"`);
    }
    if (parsed!.protocol !== 'http:' && parsed!.protocol !== 'https:')
      fail(`has a "url" that is not http or https: "${url.slice(0, 200)}"`);
    if (entry.network !== undefined)
      fail('has "network", which is for servers savepoint starts (a command): a server over HTTP runs elsewhere, outside the sandbox');
    return { name, type: 'http', url, headers: stringMap(entry.headers, 'headers', fail, expand), source };
  }
  if (type === 'sse')
    return fail(
      'uses "type": "sse", the older HTTP transport, which savepoint does not speak; use the server\'s Streamable HTTP address with "type": "http"',
    );
  return fail(`has "type": ${JSON.stringify(type).slice(0, 40)}; savepoint knows "stdio" (a command) and "http" (Streamable HTTP)`);
}

function stringMap(
  value: unknown,
  key: string,
  fail: (problem: string) => never,
  expand: (text: string, key: string) => string,
): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) fail(`has "${key}" that is not an object of strings`);
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(value as Record<string, unknown>)) {
    if (typeof text !== 'string') fail(`has "${key}.${name.slice(0, 60)}" that is not a string`);
    out[name] = expand(text as string, `${key}.${name}`);
  }
  return out;
}

/** `${VAR}` and `${VAR:-default}` in `text`, expanded from `env` as Claude Code does in `.mcp.json`. */
export function expandVariables(text: string, env: NodeJS.ProcessEnv, missing: (variable: string) => never): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, variable: string, fallback: string | undefined) => {
    const value = env[variable];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    return missing(variable);
  });
}

/** How a server is started or reached, for messages and `savepoint mcp list`: its command line, or its URL. */
export function describeServer(server: McpServerConfig): string {
  if (server.type === 'http') return server.url;
  return [server.command, ...server.args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
