// The run header's line on how commands run: the sandbox's real boundaries (src/tools/sandbox.ts),
// or that they run unconfined and why. Said before anything runs live, so a person reading a failed
// `npm install` or `git commit` already knows what refused it.
import type { SessionEvent } from '../../session/index.js';

/** The session's sandbox event. */
export type SandboxEvent = Extract<SessionEvent, { type: 'sandbox' }>;

/**
 * `commands run in a sandbox: no network; writable: the working tree (not .git) and a private /tmp;
 * no secret-named variables (--no-sandbox to lift)`, or `commands run unconfined (--no-sandbox)`.
 */
export function sandboxLine(event: SandboxEvent): string {
  if (event.kind === 'none') {
    return event.choice === 'asked' ? 'commands run unconfined: bubblewrap cannot start a sandbox here, and you chose to go on without one' : 'commands run unconfined (--no-sandbox)';
  }
  const network = event.network ? 'network allowed' : 'no network';
  const tree = event.gitWrites ? 'the working tree (.git too)' : 'the working tree (not .git)';
  return `commands run in a sandbox: ${network}; writable: ${tree} and a private /tmp; no secret-named variables (--no-sandbox to lift)`;
}
