// The run header's line on how commands and MCP servers run: the sandbox's real boundaries
// (src/tools/sandbox.ts), or that they run unconfined and why. Said before anything runs live, so a
// person reading a failed `npm install` or `git commit` already knows what refused it. It names what
// runs where: the MCP servers savepoint starts run in the sandbox with commands (some given the
// network in settings), those reached over HTTP run elsewhere and are not confined by it.
// Tested in test/cli/sandbox-line.test.ts.
import { showControls } from '../../format/text.js';
import type { SessionEvent } from '../../session/index.js';

/** The session's sandbox event. */
export type SandboxEvent = Extract<SessionEvent, { type: 'sandbox' }>;

/**
 * `commands run in a sandbox: no network; writable: the working tree (not .git) and a private /tmp,
 * not the files that decide what runs; no secret-named variables (--no-sandbox to lift)`, or `commands run unconfined (--no-sandbox)`;
 * `commands and MCP servers …` when the run starts MCP servers, with those that run otherwise named.
 */
export function sandboxLine(event: SandboxEvent): string {
  const started = event.mcp?.started ?? [];
  const what = started.length ? 'commands and MCP servers' : 'commands';
  const remote = event.mcp?.remote.length ? `; MCP servers over HTTP (${names(event.mcp.remote)}) run elsewhere, not in it` : '';
  if (event.kind === 'none') {
    const why =
      event.choice === 'asked' ? ': bubblewrap cannot start a sandbox here, and you chose to go on without one' : ' (--no-sandbox)';
    return `${what} run unconfined${why}${event.mcp?.remote.length ? `; MCP servers over HTTP (${names(event.mcp.remote)}) run elsewhere` : ''}`;
  }
  // A server given the network in settings has it when the sandbox has none.
  const networked = event.network ? [] : (event.mcp?.network ?? []);
  const network = event.network
    ? 'network allowed'
    : networked.length
      ? `no network (but for MCP server${networked.length === 1 ? '' : 's'} ${names(networked)}, given it in settings)`
      : 'no network';
  const tree = event.gitWrites ? 'the working tree (.git too)' : 'the working tree (not .git)';
  return `${what} run in a sandbox: ${network}; writable: ${tree} and a private /tmp, not the files that decide what runs; no secret-named variables (--no-sandbox to lift)${remote}`;
}

// Server names are outside input: control characters shown, never sent to the terminal.
function names(list: string[]): string {
  return list.map((name) => showControls(name)).join(', ');
}
