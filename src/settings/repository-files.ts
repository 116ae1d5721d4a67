// What a repository brings that decides what runs (SPEC, Trust): its two settings files, its
// `.mcp.json`, and its custom-command folders, read as they are on disk, and one digest of all of
// them. Trust is given to that content: the digest is what the trust store remembers, so a change
// to any of these files (a pull, or a command of a run planting one) makes the folder untrusted
// again. A folder with none of them has nothing to trust.
// Tested in test/settings/trust.test.ts.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { McpConfigError } from '../errors/index.js';

/** The repository's settings files and `.mcp.json`, relative to its root: read through symbolic links, as settings are read. */
export const TRUSTED_FILES: readonly string[] = ['.savepoint/settings.json', '.savepoint/settings.local.json', '.mcp.json'];

/** The folders of custom commands (savepoint's and Claude Code's), relative to the root: every file under them counts. */
export const COMMAND_FOLDERS: readonly string[] = ['.savepoint/commands', '.claude/commands'];

/** The largest `.mcp.json` read, as tools/mcp/config.ts holds it. */
const MAX_MCP_JSON_BYTES = 1024 * 1024;

// A command folder is walked this deep and this wide at most: a repository's folder of commands
// is a handful of files; past this the folder counts by what was read, and its size in entries.
const MAX_COMMAND_ENTRIES = 2000;

/** The repository's files that decide what runs, as read now. */
export interface RepositoryFiles {
  /** The paths found (relative, `/`), sorted. */
  files: string[];
  /** One digest of their paths and contents; undefined when there are none (nothing to trust). */
  digest: string | undefined;
}

/** Reads the files of the repository at `root` that decide what runs, and their digest. */
export function repositoryFiles(root: string): RepositoryFiles {
  const entries: Array<{ path: string; content: Buffer }> = [];
  for (const path of TRUSTED_FILES) {
    const content = readIfFile(join(root, path));
    if (content !== undefined) entries.push({ path, content });
  }
  for (const folder of COMMAND_FOLDERS) walk(root, folder, entries, { seen: 0 });
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (entries.length === 0) return { files: [], digest: undefined };
  const hash = createHash('sha256');
  for (const { path, content } of entries) {
    hash.update(`${path}\0${content.length}\0`);
    hash.update(content);
  }
  return { files: entries.map((entry) => entry.path), digest: `sha256:${hash.digest('hex')}` };
}

// A named file's bytes (through a symbolic link, as settings are read); a folder or a special file
// in its place counts by its kind, so that it cannot hide from the digest.
function readIfFile(file: string): Buffer | undefined {
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return Buffer.from(`(not a regular file: mode ${stat.mode.toString(8)})`);
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return Buffer.from(`(unreadable: ${code ?? 'error'})`);
  }
}

// Every file under a command folder, without following symbolic links (a link counts by where it points).
function walk(root: string, rel: string, entries: Array<{ path: string; content: Buffer }>, count: { seen: number }): void {
  let names: string[];
  try {
    if (!lstatSync(join(root, rel)).isDirectory()) {
      const content = lstatSync(join(root, rel)).isSymbolicLink()
        ? Buffer.from(`link -> ${readlinkSync(join(root, rel))}`)
        : readIfFile(join(root, rel));
      if (content !== undefined) entries.push({ path: rel, content });
      return;
    }
    names = readdirSync(join(root, rel)).sort();
  } catch {
    return; // not there
  }
  for (const name of names) {
    if (++count.seen > MAX_COMMAND_ENTRIES) {
      entries.push({ path: `${rel}/…`, content: Buffer.from(`more than ${MAX_COMMAND_ENTRIES} entries`) });
      return;
    }
    walk(root, `${rel}/${name}`, entries, count);
  }
}

/**
 * The servers `.mcp.json` at `root` names, as written (unchecked, `${VAR}` not expanded: whoever
 * starts one checks it), or undefined when there is no such file. A file that is not a JSON object
 * of servers stops the command, as it always has, with McpConfigError.
 */
export function readMcpJsonServers(root: string): Record<string, unknown> | undefined {
  const file = join(root, '.mcp.json');
  let text: string;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new McpConfigError('.mcp.json', '', 'is not a regular file');
    if (stat.size > MAX_MCP_JSON_BYTES)
      throw new McpConfigError('.mcp.json', '', `is ${stat.size} bytes, more than the ${MAX_MCP_JSON_BYTES} a configuration may have`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError('.mcp.json', '', `is not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed)) throw new McpConfigError('.mcp.json', '', 'must hold a JSON object');
  if (parsed.mcpServers === undefined) return {};
  if (!isObject(parsed.mcpServers)) throw new McpConfigError('.mcp.json', '', 'has "mcpServers" that is not an object of servers by name');
  return parsed.mcpServers;
}

/** The names of the variables a server's configuration expands through `${VAR}` or `${VAR:-default}`, sorted. */
export function expandedVariables(server: unknown): string[] {
  const names = new Set<string>();
  const visit = (value: unknown) => {
    if (typeof value === 'string') for (const match of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g)) names.add(match[1]!);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) Object.values(value).forEach(visit);
  };
  visit(server);
  return [...names].sort();
}

/** The digest of one server's configuration as written, and the variables it expands: what approving it approves. */
export function serverDigest(server: unknown): string {
  return `sha256:${createHash('sha256')
    .update(`${canonicalJson(server)}\0${expandedVariables(server).join(',')}`)
    .digest('hex')}`;
}

// JSON with every object's keys sorted, so that the same configuration has one digest.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
