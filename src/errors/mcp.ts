// Errors of MCP servers (src/tools/mcp/): a configuration that does not hold, a server that cannot start.
// Tested in test/tools/mcp/config.test.ts.
import { SavepointError } from './savepoint-error.js';

/** `.mcp.json` (or an `mcpServers` object from settings) that is not valid: names the file and the key. */
export class McpConfigError extends SavepointError<{ file: string; key: string }> {
  constructor(file: string, key: string, problem: string) {
    super(
      'EMCPCONFIG',
      `${file}: ${key ? `mcpServers key "${key}"` : 'the file'} ${problem}. See docs/mcp.md for the format: {"mcpServers": {"<name>": {"command", "args", "env"} | {"type": "http", "url", "headers"}}}.`,
      { file, key },
    );
  }
}

/** An MCP server that did not start (or did not answer its handshake): what was run, and the end of what it wrote to stderr. */
export class McpServerStartError extends SavepointError<{ server: string; command: string; stderrTail: string }> {
  constructor(server: string, command: string, why: string, stderrTail: string) {
    const tail = stderrTail.trim() ? ` Its stderr ended with:\n${stderrTail.trim()}` : ' It wrote nothing to stderr.';
    super('EMCPSTART', `The MCP server "${server}" (${command}) could not be started: ${why}.${tail}`, { server, command, stderrTail });
  }
}

/** A call its MCP server did not answer in time, or that the server's exit cut short: its outcome is unknown. */
export class McpCallError extends SavepointError<{ server: string; tool: string; reason: 'timeout' | 'closed'; stderrTail: string }> {
  constructor(server: string, tool: string, reason: 'timeout' | 'closed', timeoutMs: number, stderrTail: string) {
    const what =
      reason === 'timeout'
        ? `did not answer the call to "${tool}" within ${timeoutMs / 1000} s (MCP_TOOL_TIMEOUT sets the limit in ms), so the call was cancelled`
        : `exited (or closed its connection) before answering the call to "${tool}"`;
    const tail = stderrTail.trim() ? ` Its stderr ended with:\n${stderrTail.trim()}` : '';
    const again = reason === 'closed' ? ' (its next call starts the server anew)' : '';
    super(
      'EMCPCALL',
      `The MCP server "${server}" ${what}; whether the call took effect is unknown, and it was not made again${again}.${tail}`,
      { server, tool, reason, stderrTail },
    );
  }
}
