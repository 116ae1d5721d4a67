// MCP servers' tools (SPEC, MCP): configuration (config.ts), the servers of one process
// (connections.ts, each stdio server under stdio-guard.ts), their tools pinned and called as
// journaled steps (mcp-tools.ts), results kept whole (result.ts), secrets for the redactor (secrets.ts).
// No behaviour of its own: re-exports only.
export {
  describeServer,
  expandVariables,
  loadMcpServers,
  MCP_CONFIG_FILE,
  parseMcpServers,
  type LoadMcpOptions,
  type McpHttpServer,
  type McpServerConfig,
  type McpStdioServer,
} from './config.js';
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_START_TIMEOUT_MS,
  mcpLogDir,
  McpConnections,
  type McpConnectionOptions,
  type McpListedTool,
} from './connections.js';
export { createMcpTool, createMcpTools, mcpToolName, offerMcpTools, type OfferedMcpTools } from './mcp-tools.js';
export { mcpToolResult } from './result.js';
export { mcpSecretEnv } from './secrets.js';
