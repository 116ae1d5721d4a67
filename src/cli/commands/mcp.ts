// `savepoint mcp list`: the MCP servers configured for the repository around the current
// directory (.mcp.json and settings), whether each starts, and the tools it offers with their
// annotations, as a new run would pin them. It starts each server, lists, and stops it again:
// a stdio server in the sandbox, as a run starts it (--no-sandbox and --allow-network as for a run).
import { loadSettings } from '../../settings/index.js';
import { mcpServersOf, repositoryRoot } from '../view/session-settings.js';
import { Command } from 'commander';
import { showControls, terminalJson } from '../../format/text.js';
import { findRepository } from '../../git/repository.js';
import { describeServer, loadMcpServers, mcpLogDir, McpConnections, mcpToolName, type LoadMcpOptions, type McpListedTool } from '../../tools/mcp/index.js';
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
  tools: Array<{ name: string; tool: string; description: string; annotations: Record<string, unknown> }>;
}

/** The `mcp` command and its `list` subcommand. */
export function mcpCommand(): Command {
  const mcp = new Command('mcp').summary('the MCP servers configured for this repository').description('MCP servers from .mcp.json at the repository root (Claude Code\'s format) and from settings. See docs/mcp.md.');
  mcp
    .command('list')
    .description('Start each configured MCP server, list its tools with their annotations (read-only ones replay; the others record their intent first and ask for approval), and stop it again.')
    .option('--json', 'one JSON object with every server, for scripts')
    .option('--no-sandbox', 'start the servers unconfined, with your whole environment and file system (default: in bubblewrap, as a run starts them)')
    .option('--allow-network', 'let the servers in the sandbox reach the network (a server\'s own "network": true in settings does too)')
    .action(async (flags: { json?: boolean; sandbox?: boolean; allowNetwork?: boolean }) => {
      // Settings' servers too (a broken settings file is named here, as for a run).
      const settings = loadSettings(repositoryRoot(process.cwd()), process.env);
      const fromSettings = mcpServersOf(settings);
      const sandbox: SandboxRequest = { use: flags.sandbox !== false, network: Boolean(flags.allowNetwork) || settings.sandbox.network?.value === true, gitWrites: settings.sandbox.gitWrites?.value === true };
      const listing = await listMcpServers(process.cwd(), fromSettings, sandbox);
      if (flags.json) process.stdout.write(`${terminalJson({ servers: listing }, 2)}\n`);
      else process.stdout.write(formatListing(listing));
      if (listing.some((server) => !server.starts)) process.exitCode = 1;
    });
  return mcp;
}

/**
 * Starts every server configured for the repository around `dir` (and in `given`, settings' mcpServers)
 * in the sandbox `sandbox` asks for (by default bubblewrap; a machine without it refuses, as a run
 * does, unless it is waived), lists its tools, and stops it.
 */
export async function listMcpServers(dir: string, given?: LoadMcpOptions['given'], sandbox: SandboxRequest = {}): Promise<McpServerListing[]> {
  const repo = findRepository(dir);
  const servers = loadMcpServers(repo.root, given ? { given } : {});
  // Decided before any server starts: a refusal stops the command, not one server.
  const chosen = [...servers.values()].some((server) => server.type === 'stdio') ? (await chooseSandbox(repo.root, sandbox)).sandbox : { kind: 'none' as const };
  const connections = new McpConnections(servers, { logDir: mcpLogDir(repo.commonDir), sandbox: () => ({ config: chosen, root: repo.root }) });
  try {
    return await Promise.all(
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
          tools: tools.map((tool) => ({ name: mcpToolName(server.name, tool.name), tool: tool.name, description: tool.description ?? '', annotations: { ...(tool.annotations ?? {}) } })),
        };
      }),
    );
  } finally {
    await connections.close();
  }
}

function formatListing(listing: McpServerListing[]): string {
  if (listing.length === 0) return 'No MCP servers are configured: add them to .mcp.json at the repository root (see docs/mcp.md).\n';
  const lines: string[] = [];
  for (const server of listing) {
    lines.push(`${visible(server.name)}  (${server.type}: ${visible(server.command)}; from ${server.source})`);
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
