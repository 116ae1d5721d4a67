// The secrets in MCP servers' configurations, as variables for the run's redactor: a server's
// secret-named env entries (GITHUB_TOKEN) and its credential headers (Authorization, X-Api-Key) are
// not in savepoint's own environment, yet a server's error, stderr tail or answer may echo them.
// Tested in test/tools/mcp/config.test.ts.
import { SECRET_NAME } from '../../redact/redactor.js';
import type { McpServerConfig } from './config.js';

const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$/i;

/** Secret-named values of `servers`' env and headers, named `MCP_<SERVER>_<NAME>` (placeholders read `[REDACTED:MCP_GITHUB_GITHUB_TOKEN]`). */
export function mcpSecretEnv(servers: Iterable<McpServerConfig>): Record<string, string> {
  const secrets: Record<string, string> = {};
  const upper = (text: string) => text.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  for (const server of servers) {
    const prefix = `MCP_${upper(server.name)}`;
    const entries = server.type === 'stdio' ? server.env : server.headers;
    for (const [name, value] of Object.entries(entries)) {
      if (SECRET_NAME.test(name)) secrets[`${prefix}_${upper(name)}`] = value;
      else if (server.type === 'http' && CREDENTIAL_HEADER.test(name)) {
        // Named so the redactor takes them as secrets; the token after "Bearer " on its own too.
        secrets[`${prefix}_${upper(name)}_TOKEN`] = value;
        const token = value.replace(/^\s*\w+\s+/, '');
        if (token !== value) secrets[`${prefix}_${upper(name)}_BEARER_TOKEN`] = token;
      }
    }
  }
  return secrets;
}
