// `savepoint mcp list`: the MCP servers configured for the repository around the current
// directory (.mcp.json and settings), whether each starts, and the tools it offers with their
// annotations, as a new run would pin them. It starts each server in force, lists, and stops it
// again (a stdio server in the sandbox, as a run starts it: --no-sandbox and --allow-network as for a
// run); a server the repository names that is not in force (the folder not trusted, or the server
// not approved) is never started: it is listed with its command and how to approve it.
// `savepoint mcp approve [name...]`: the person approves the repository's servers, each shown whole.
// Tested in test/cli/settings.test.ts and test/cli/trust.test.ts.
import { loadSettings, recordServerApprovals, type RepositoryServer, type Settings } from '../../settings/index.js';
import { mcpServersOf, repositoryRoot } from '../view/session-settings.js';
import { describeRepositoryServer } from '../view/trust-question.js';
import { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { showControls, terminalJson } from '../../format/text.js';
import { findRepository } from '../../git/repository.js';
import {
  describeServer,
  loadMcpServers,
  mcpLogDir,
  McpConnections,
  mcpToolName,
  type LoadMcpOptions,
  type McpListedTool,
} from '../../tools/mcp/index.js';
import { chooseSandbox, type SandboxRequest } from '../../session/sandbox.js';

/** One server as `mcp list` reports it. */
export interface McpServerListing {
  name: string;
  type: 'stdio' | 'http';
  /** Its command line, or its URL. */
  command: string;
  source: string;
  starts: boolean;
  error?: string;
  /** A repository's server that was not started: why (the folder is not trusted, or the server not approved) and how to have it. */
  notStarted?: string;
  tools: Array<{ name: string; tool: string; description: string; annotations: Record<string, unknown> }>;
}

/** The `mcp` command and its `list` and `approve` subcommands. */
export function mcpCommand(): Command {
  const mcp = new Command('mcp')
    .summary('the MCP servers configured for this repository')
    .description(
      "MCP servers from .mcp.json at the repository root (Claude Code's format) and from settings. A repository's own servers start only once you trust the folder and approve each one. See docs/mcp.md and docs/trust.md.",
    );
  mcp
    .command('list')
    .description(
      "Start each MCP server in force, list its tools with their annotations (read-only ones replay; the others record their intent first and ask for approval), and stop it again. A server of the repository's that is not trusted or approved is listed with its command, never started.",
    )
    .option('--json', 'one JSON object with every server, for scripts')
    .option(
      '--no-sandbox',
      'start the servers unconfined, with your whole environment and file system (default: in bubblewrap, as a run starts them)',
    )
    .option('--allow-network', 'let the servers in the sandbox reach the network (a server\'s own "network": true in settings does too)')
    .action(async (flags: { json?: boolean; sandbox?: boolean; allowNetwork?: boolean }) => {
      // Settings' servers too (a broken settings file is named here, as for a run).
      const settings = loadSettings(repositoryRoot(process.cwd()), process.env);
      const sandbox: SandboxRequest = {
        use: flags.sandbox !== false,
        network: Boolean(flags.allowNetwork) || settings.sandbox.network?.value === true,
        gitWrites: settings.sandbox.gitWrites?.value === true,
      };
      const listing = await listMcpServers(process.cwd(), mcpServersOf(settings), settings, sandbox);
      if (flags.json) process.stdout.write(`${terminalJson({ servers: listing }, 2)}\n`);
      else process.stdout.write(formatListing(listing));
      if (listing.some((server) => !server.starts && !server.notStarted)) process.exitCode = 1;
    });
  mcp
    .command('approve')
    .description(
      'Approve MCP servers this repository names (.mcp.json, .savepoint/settings*.json), as they are configured now: each starts in a trusted folder from then on, until its configuration changes. With no name, every one not yet approved.',
    )
    .argument('[name...]', "the servers to approve (default: all of the repository's not yet approved)")
    .option('--trust', "trust this folder's own files too, as run --trust does")
    .action((names: string[], flags: { trust?: boolean }) => {
      const root = repositoryRoot(process.cwd());
      if (!root)
        throw new UsageError('savepoint mcp approve works in a git repository: run it in the repository whose MCP servers you mean.');
      const settings = loadSettings(root, process.env, { trust: Boolean(flags.trust) });
      process.stdout.write(approveServers(settings, root, names));
    });
  return mcp;
}

/** Records the person's approval of `names` (all not yet approved when none) of the repository's servers; returns what to tell them. */
export function approveServers(settings: Settings, root: string, names: string[], env: NodeJS.ProcessEnv = process.env): string {
  const servers = settings.repositoryServers;
  const unknown = names.filter((name) => !servers.some((server) => server.name === name));
  if (unknown.length) {
    const known = servers.map((server) => server.name).join(', ') || 'none';
    throw new UsageError(
      `This repository names no MCP server ${unknown.map((name) => `"${showControls(name)}"`).join(', ')}: its servers are ${showControls(known)} (a server of your own settings needs no approval).`,
    );
  }
  const chosen = names.length ? servers.filter((server) => names.includes(server.name)) : servers.filter((server) => !server.approved);
  if (chosen.length === 0)
    return servers.length
      ? 'Every MCP server this repository names is approved already.\n'
      : 'This repository names no MCP servers (.mcp.json, .savepoint/settings*.json).\n';
  recordServerApprovals(root, Object.fromEntries(chosen.map((server) => [server.name, server.digest])), env);
  const lines = chosen.map(
    (server: RepositoryServer) =>
      `Approved MCP server "${showControls(server.name)}" (${showControls(relativeTo(root, server.source))}): ${describeRepositoryServer(server)}`,
  );
  if (settings.trust.state === 'untrusted')
    lines.push(
      'This folder is not trusted yet: its servers start once you trust it (run with --trust, or answer the trust question on a terminal; see docs/trust.md).',
    );
  return `${lines.join('\n')}\n`;
}

/**
 * Starts every server in force for the repository around `dir` (`given`: the settings' servers in
 * force, the repository's trusted and approved ones among them) in the sandbox `sandbox` asks for
 * (by default bubblewrap; a machine without it refuses, as a run does, unless it is waived), lists
 * its tools, and stops it; the repository's servers not in force (`settings`) are listed unstarted,
 * with how to approve them.
 */
export async function listMcpServers(
  dir: string,
  given?: LoadMcpOptions['given'],
  settings?: Settings,
  sandbox: SandboxRequest = {},
): Promise<McpServerListing[]> {
  const repo = findRepository(dir);
  const servers = loadMcpServers(repo.root, { readMcpJson: false, ...(given ? { given } : {}) });
  // Decided before any server starts: a refusal stops the command, not one server.
  const chosen = [...servers.values()].some((server) => server.type === 'stdio')
    ? (await chooseSandbox(repo.root, sandbox)).sandbox
    : { kind: 'none' as const };
  const connections = new McpConnections(servers, {
    logDir: mcpLogDir(repo.commonDir),
    sandbox: () => ({ config: chosen, root: repo.root }),
  });
  const notStarted = (settings?.repositoryServers ?? [])
    .filter((server) => !server.inForce && !servers.has(server.name))
    .map((server): McpServerListing => ({
      name: server.name,
      type: server.config.url !== undefined || server.config.type === 'http' ? 'http' : 'stdio',
      command: describeRepositoryServer(server),
      source: relativeTo(repo.root, server.source),
      starts: false,
      notStarted:
        settings!.trust.state !== 'untrusted'
          ? `not started: not approved (savepoint mcp approve ${server.name})`
          : server.approved
            ? 'not started: approved, but this folder is not trusted (savepoint mcp approve --trust, run --trust, or the trust question on a terminal)'
            : `not started: this folder is not trusted and the server not approved (savepoint mcp approve --trust ${server.name})`,
      tools: [],
    }));
  try {
    const started = await Promise.all(
      [...servers.values()].map(async (server): Promise<McpServerListing> => {
        const base = { name: server.name, type: server.type, command: describeServer(server), source: server.source };
        let tools: McpListedTool[];
        try {
          tools = await connections.listTools(server.name);
        } catch (error) {
          return { ...base, starts: false, error: (error as Error).message, tools: [] };
        }
        return {
          ...base,
          starts: true,
          tools: tools.map((tool) => ({
            name: mcpToolName(server.name, tool.name),
            tool: tool.name,
            description: tool.description ?? '',
            annotations: { ...(tool.annotations ?? {}) },
          })),
        };
      }),
    );
    return [...started, ...notStarted];
  } finally {
    await connections.close();
  }
}

function relativeTo(root: string, source: string): string {
  return source.startsWith(`${root}/`) ? source.slice(root.length + 1) : source;
}

function formatListing(listing: McpServerListing[]): string {
  if (listing.length === 0) return 'No MCP servers are configured: add them to .mcp.json at the repository root (see docs/mcp.md).\n';
  const lines: string[] = [];
  for (const server of listing) {
    lines.push(`${visible(server.name)}  (${server.type}: ${visible(server.command)}; from ${visible(server.source)})`);
    if (server.notStarted) {
      lines.push(`  ${visible(server.notStarted)}`, '');
      continue;
    }
    if (!server.starts) {
      lines.push(`  does not start: ${visible(server.error ?? 'unknown reason').replace(/\n/g, '\n  ')}`, '');
      continue;
    }
    lines.push(`  starts; ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}`);
    for (const tool of server.tools) {
      const readOnly = tool.annotations.readOnlyHint === true;
      const hints = Object.entries(tool.annotations)
        .filter(([key]) => key.endsWith('Hint'))
        .map(([key, value]) => `${key}: ${String(value)}`);
      const handling = readOnly ? 'read-only: replays, no approval' : 'records intent first, asks for approval';
      const description = visible(tool.description).split('\n')[0]!.slice(0, 100);
      lines.push(`  ${visible(tool.name)}  ${handling}${hints.length ? ` (${hints.join(', ')})` : ''}`);
      if (description) lines.push(`      ${description}`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

// A server's strings are outside input: control characters are shown, never sent to the terminal.
function visible(text: string): string {
  return showControls(text);
}
