// Trusting a test's repository as a person would (answering yes to the trust question, or
// `--trust` and `savepoint mcp approve`), for the tests whose subject is what a repository's own
// settings or `.mcp.json` do once trusted: the folder's files as they are now, and every MCP server
// it names, are recorded in the trust store of the user config folder `configHome`.
//
//   const env = { ...fakeEnv(fake), ...trustFolder(repo.root, scratch.dir('savepoint-config-')) };
import { folderTrust, loadSettings, recordServerApprovals } from '../../src/settings/index.js';

/** Records `root` as trusted (and each MCP server it names as approved) in `configHome`'s trust store; returns the XDG_CONFIG_HOME to run with. */
export function trustFolder(root: string, configHome: string): { XDG_CONFIG_HOME: string } {
  const env = { ...process.env, XDG_CONFIG_HOME: configHome };
  const trust = folderTrust(root, env, { trust: true });
  if (trust.state === 'nothing-to-trust') throw new Error(`trustFolder: ${root} has no files to trust (write its settings or .mcp.json first)`);
  const servers = loadSettings(root, env).repositoryServers;
  if (servers.length) recordServerApprovals(root, Object.fromEntries(servers.map((server) => [server.name, server.digest])), env);
  return { XDG_CONFIG_HOME: configHome };
}
