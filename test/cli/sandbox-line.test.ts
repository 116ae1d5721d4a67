// The header's line on where commands and MCP servers run, for each sandbox event: the same line as
// before for a run without MCP servers; "commands and MCP servers" when it starts some; a server given
// the network in settings named; servers over HTTP said to run elsewhere; unconfined said as such.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sandboxLine, type SandboxEvent } from '../../src/cli/view/sandbox-line.js';

const SANDBOXED: SandboxEvent = { type: 'sandbox', kind: 'bwrap', network: false, gitWrites: false, choice: 'default' };
const UNCONFINED: SandboxEvent = { type: 'sandbox', kind: 'none', network: true, gitWrites: true, choice: 'flag' };
const TAIL = 'writable: the working tree (not .git) and a private /tmp, not the files that decide what runs; no secret-named variables (--no-sandbox to lift)';

describe('the sandbox line of the run header', () => {
  test('without MCP servers it speaks of commands only', () => {
    assert.equal(sandboxLine(SANDBOXED), `commands run in a sandbox: no network; ${TAIL}`);
    assert.equal(sandboxLine(UNCONFINED), 'commands run unconfined (--no-sandbox)');
  });

  test('with stdio servers they are in the sandbox too; one given the network is named, as are servers over HTTP', () => {
    assert.equal(sandboxLine({ ...SANDBOXED, mcp: { started: ['db'], network: [], remote: [] } }), `commands and MCP servers run in a sandbox: no network; ${TAIL}`);
    assert.equal(
      sandboxLine({ ...SANDBOXED, mcp: { started: ['db', 'github'], network: ['github'], remote: ['docs'] } }),
      `commands and MCP servers run in a sandbox: no network (but for MCP server github, given it in settings); ${TAIL}; MCP servers over HTTP (docs) run elsewhere, not in it`,
    );
    assert.match(sandboxLine({ ...SANDBOXED, network: true, mcp: { started: ['github'], network: ['github'], remote: [] } }), /^commands and MCP servers run in a sandbox: network allowed;/);
    assert.equal(sandboxLine({ ...SANDBOXED, mcp: { started: [], network: [], remote: ['docs'] } }), `commands run in a sandbox: no network; ${TAIL}; MCP servers over HTTP (docs) run elsewhere, not in it`);
  });

  test('unconfined, servers are said to be so too, and how that was decided', () => {
    assert.equal(sandboxLine({ ...UNCONFINED, mcp: { started: ['db'], network: [], remote: [] } }), 'commands and MCP servers run unconfined (--no-sandbox)');
    assert.equal(
      sandboxLine({ ...UNCONFINED, choice: 'asked', mcp: { started: ['db'], network: [], remote: ['docs'] } }),
      'commands and MCP servers run unconfined: bubblewrap cannot start a sandbox here, and you chose to go on without one; MCP servers over HTTP (docs) run elsewhere',
    );
  });
});
