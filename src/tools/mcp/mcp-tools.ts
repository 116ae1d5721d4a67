// MCP servers' tools as savepoint tools. A new run lists every configured server's tools and pins
// them in run.json (definitions with the other tools, and which server and tool each name calls,
// with its annotations); every later attempt builds its tools from that pin, so a resumed or
// replayed run sees the same tools whatever the server offers now. The annotations decide the
// journal's handling: `readOnlyHint: true` is safe to repeat (no intent, no approval); anything
// else records its intent first, asks for approval like run_bash, and is checkpointed after.
// Tested in test/tools/mcp/config.test.ts and test/tools/mcp/connections.test.ts.
import type { PinnedMcpTool, RunConfig } from '../../journal/entry.js';
import { oneLine } from '../../format/text.js';
import { isSavepointError, StoppedBySignalError, stopSignalWords } from '../../errors/index.js';
import { READS_AT_ONCE, toolError } from '../define-tool.js';
import type { AnyTool, ToolInputSchema, ToolResult } from '../types.js';
import type { McpConnections } from './connections.js';
import { mcpToolResult } from './result.js';

// A server's description is outside input and goes into every request: held to what Claude Code allows.
const MAX_DESCRIPTION_CHARS = 2048;

/** The API's limit on a tool name's characters and length. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** A tool definition as the model is shown it (RunConfig's `tools`). */
export type ToolSpec = RunConfig['tools'][number];

/** What listing the servers for a new run gives: the definitions for the model and the pin. */
export interface OfferedMcpTools {
  definitions: ToolSpec[];
  pinned: PinnedMcpTool[];
}

/** The model's name for `tool` of `server`: `mcp__<server>__<tool>`, with characters the API refuses as `_`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 128);
}

/**
 * Lists the tools of every configured server (starting each; they stay up for the run's live
 * steps). A server that cannot start or list is told to `onUnavailable` and offers nothing.
 */
export async function offerMcpTools(
  connections: McpConnections,
  onUnavailable: (server: string, message: string) => void = () => {},
): Promise<OfferedMcpTools> {
  const offered: OfferedMcpTools = { definitions: [], pinned: [] };
  const names = new Set<string>();
  const lists = await Promise.all(
    [...connections.servers.keys()].map(async (server) => {
      try {
        return { server, tools: await connections.listTools(server) };
      } catch (error) {
        onUnavailable(server, (error as Error).message);
        return { server, tools: [] };
      }
    }),
  );
  for (const { server, tools } of lists) {
    for (const tool of tools) {
      const name = mcpToolName(server, tool.name);
      if (names.has(name) || !TOOL_NAME.test(name)) continue; // two tools whose names map to one: the first wins
      names.add(name);
      const annotations = tool.annotations as Record<string, unknown> | undefined;
      offered.definitions.push({
        name,
        description: cut(tool.description ?? tool.title ?? '', MAX_DESCRIPTION_CHARS),
        input_schema: { ...(tool.inputSchema as Record<string, unknown>), type: 'object' },
      });
      offered.pinned.push({
        name,
        server,
        tool: tool.name,
        readOnly: annotations?.readOnlyHint === true,
        ...(annotations ? { annotations: { ...annotations } } : {}),
      });
    }
  }
  return offered;
}

/**
 * The run's MCP tools, from its pinned configuration: each calls its server through `connections`
 * (started on the first live call). A pin that does not hold (a fetched run.json is input) is skipped.
 */
export function createMcpTools(config: Pick<RunConfig, 'mcp' | 'tools'>, connections: McpConnections): AnyTool[] {
  const definitions = new Map(config.tools.map((definition) => [definition.name, definition]));
  const tools: AnyTool[] = [];
  for (const pin of Array.isArray(config.mcp) ? config.mcp : []) {
    if (!isPin(pin)) continue;
    const definition = definitions.get(pin.name);
    if (!definition) continue;
    tools.push(createMcpTool(pin, definition, connections));
  }
  return tools;
}

function isPin(value: unknown): value is PinnedMcpTool {
  const pin = value as PinnedMcpTool;
  return (
    typeof pin === 'object' &&
    pin !== null &&
    typeof pin.name === 'string' &&
    TOOL_NAME.test(pin.name) &&
    typeof pin.server === 'string' &&
    typeof pin.tool === 'string' &&
    typeof pin.readOnly === 'boolean'
  );
}

/** One pinned MCP tool as a savepoint tool. */
export function createMcpTool(pin: PinnedMcpTool, definition: ToolSpec, connections: McpConnections): AnyTool {
  const { name, server, tool, readOnly } = pin;
  return {
    name,
    description: definition.description,
    inputSchema: definition.input_schema as unknown as ToolInputSchema,
    // The input's shape is the server's to check: it answers a bad one with an error result.
    // A read-only tool (its server says readOnlyHint) runs beside the other reads of its answer.
    ...(readOnly ? { maxConcurrent: READS_AT_ONCE } : {}),
    isRepeatSafe: () => readOnly,
    needsApproval: () => !readOnly,
    // A tool that is not read-only may write files (a filesystem server): a checkpoint follows it.
    mayChangeFiles: () => !readOnly,
    describe: (input) => `${name} ${oneLine(safeJson(input), 50)}`,
    async execute(input, context = {}): Promise<ToolResult> {
      if (typeof input !== 'object' || input === null || Array.isArray(input))
        return toolError(`The input of ${name} must be a JSON object; the call did not run.`, 'error: invalid input');
      if (!connections.servers.has(server)) {
        return toolError(
          `The MCP server "${server}" that offered ${name} when this run was created is not configured any more (.mcp.json or settings), so the call did not run.`,
          `error: server "${server}" not configured`,
        );
      }
      let listed;
      try {
        listed = await connections.listTools(server);
      } catch (error) {
        return toolError(`${(error as Error).message}\nThe call to ${name} did not run.`, `error: server "${server}" did not start`);
      }
      if (!listed.some((offered) => offered.name === tool)) {
        const now =
          listed
            .map((offered) => offered.name)
            .slice(0, 30)
            .join(', ') || 'none';
        return toolError(
          `The MCP server "${server}" no longer offers the tool "${tool}" (${name} was pinned when this run was created), so the call did not run. It offers now: ${now}.`,
          `error: "${tool}" no longer offered`,
        );
      }
      try {
        return mcpToolResult(await connections.callTool(server, tool, input as Record<string, unknown>, context.signal));
      } catch (error) {
        if (context.signal?.aborted) {
          // The server had the request: whether it acted on it before the cancel is not known.
          const reason = context.signal.reason;
          const who =
            reason instanceof StoppedBySignalError ? `by the person (${stopSignalWords(reason.data.signal)})` : 'by the caller (aborted)';
          return toolError(
            `stopped ${who} while the call to ${name} was in progress: the server had received it, so its outcome is unknown (it may have taken effect). It was not called again.`,
            'stopped: outcome unknown',
          );
        }
        const message = isSavepointError(error)
          ? error.message
          : `The MCP server "${server}" answered the call to "${tool}" with an error: ${(error as Error)?.message ?? String(error)}`;
        return toolError(message);
      }
    },
  };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
