// Trusting a test's repository as a person would (answering yes to the trust question, or
// `--trust` and `savepoint mcp approve`), for the tests whose subject is what a repository's own
// settings or `.mcp.json` do once trusted: the folder's files as they are now, and every MCP server
// it names, are recorded in the trust store of the user config folder `configHome`.
//
//   const env = { ...fakeEnv(fake), ...trustFolder(repo.root, scratch.dir('savepoint-config-')) };
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { folderTrust, loadSettings, recordServerApprovals } from '../../src/settings/index.js';
import type { Scratch } from './scratch.js';

/**
 * A home and user config folder of the test's own (HOME, XDG_CONFIG_HOME to run with), holding
 * `settings` as the person's settings.json when given (a string is written as it is: a broken file).
 */
export function userHomeIn(scratch: Scratch, settings?: unknown): { HOME: string; XDG_CONFIG_HOME: string } {
  const home = scratch.dir('savepoint-home-');
  const config = join(home, '.config');
  if (settings !== undefined) {
    mkdirSync(join(config, 'savepoint'), { recursive: true });
    writeFileSync(join(config, 'savepoint', 'settings.json'), typeof settings === 'string' ? settings : JSON.stringify(settings));
  }
  return { HOME: home, XDG_CONFIG_HOME: config };
}

/** Records `root` as trusted (and each MCP server it names as approved) in `configHome`'s trust store; returns the XDG_CONFIG_HOME to run with. */
export function trustFolder(root: string, configHome: string): { XDG_CONFIG_HOME: string } {
  const env = { ...process.env, XDG_CONFIG_HOME: configHome };
  const trust = folderTrust(root, env, { trust: true });
  if (trust.state === 'nothing-to-trust') throw new Error(`trustFolder: ${root} has no files to trust (write its settings or .mcp.json first)`);
  const servers = loadSettings(root, env).repositoryServers;
  if (servers.length) recordServerApprovals(root, Object.fromEntries(servers.map((server) => [server.name, server.digest])), env);
  return { XDG_CONFIG_HOME: configHome };
}
