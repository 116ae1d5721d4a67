// McpConnections, the servers of one process: started on first use only, over stdio (under the
// guard) or Streamable HTTP (with the configured headers), and stopped together at once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { McpConnections } from '../../../src/tools/mcp/connections.js';
import type { McpServerConfig } from '../../../src/tools/mcp/config.js';
import { createMcpTools, offerMcpTools } from '../../../src/tools/mcp/mcp-tools.js';
import { useScratch } from '../../helpers/scratch.js';
import { COUNTING_SERVER, counted, serverPids, startHttpServer, waitForExit } from './helpers.js';

const scratch = useScratch();

// These servers run unconfined (as under --no-sandbox): the sandboxed start is tested in sandbox.test.ts.
const UNCONFINED = { sandbox: () => ({ config: { kind: 'none' as const }, root: process.cwd() }) };

describe('the MCP servers of one process', { concurrency: true }, () => {
  test('a Streamable HTTP server is reached with its headers, and its tools work as pinned tools', async () => {
    const server = await startHttpServer();
    scratch.defer(() => server.close());
    const config: McpServerConfig = { name: 'remote', type: 'http', url: server.url, headers: { Authorization: 'Bearer let-me-in-123' }, source: '.mcp.json' };
    const connections = new McpConnections(new Map([['remote', config]]), UNCONFINED);
    assert.equal(server.requests, 0, 'nothing is reached before it is needed');
    try {
      const offered = await offerMcpTools(connections);
      assert.deepEqual(offered.pinned, [{ name: 'mcp__remote__whoami', server: 'remote', tool: 'whoami', readOnly: true, annotations: { readOnlyHint: true } }]);
      const [tool] = createMcpTools({ tools: offered.definitions, mcp: offered.pinned }, connections);
      assert.equal(tool?.isRepeatSafe({ greeting: 'hi' }), true);
      assert.equal(tool?.needsApproval({ greeting: 'hi' }), false);
      const result = await tool!.execute({ greeting: 'hello' });
      assert.equal(result.isError, false);
      assert.equal(result.output, 'hello, Bearer let-me-in-123 from undefined');
      const bad = await tool!.execute({ greeting: 42 });
      assert.equal(bad.isError, true, 'input the server refuses is an error result');
    } finally {
      await connections.close();
    }
  });

  test('a stdio server starts on first use only, and close stops it at once', async () => {
    const counts = scratch.dir('savepoint-mcp-counts-');
    const config: McpServerConfig = { name: 'counter', type: 'stdio', command: process.execPath, args: [COUNTING_SERVER], env: { COUNT_DIR: counts }, source: '.mcp.json' };
    const connections = new McpConnections(new Map([['counter', config]]), UNCONFINED);
    const [lookup, sendMail] = createMcpTools(
      {
        tools: [
          { name: 'mcp__counter__lookup', description: 'd', input_schema: { type: 'object' } },
          { name: 'mcp__counter__send_mail', description: 'd', input_schema: { type: 'object' } },
        ],
        mcp: [
          { name: 'mcp__counter__lookup', server: 'counter', tool: 'lookup', readOnly: true },
          { name: 'mcp__counter__send_mail', server: 'counter', tool: 'send_mail', readOnly: false },
        ],
      },
      connections,
    );
    assert.equal(sendMail?.isRepeatSafe({}), false, 'a tool that is not read-only records its intent first');
    assert.equal(sendMail?.needsApproval({}), true);
    assert.equal(counted(counts, 'starts'), 0, 'making the tools starts nothing');
    const first = await lookup!.execute({ key: 'a' });
    const second = await lookup!.execute({ key: 'b' });
    assert.equal(first.output, 'the value of a is 42');
    assert.equal(second.output, 'the value of b is 42');
    assert.equal(counted(counts, 'starts'), 1, 'one start serves every call');
    const pids = serverPids(counts);
    await connections.close();
    assert.deepEqual(await waitForExit(pids), [], 'the server ended with the connections');
    const after = await lookup!.execute({ key: 'c' });
    assert.equal(after.isError, true, 'a call after the end is an error result, not a new server');
  });

  test('a pin that does not hold (a fetched run.json is input) is skipped', () => {
    const connections = new McpConnections(new Map(), UNCONFINED);
    const tools = createMcpTools({ tools: [{ name: 'mcp__x__y', description: '', input_schema: { type: 'object' } }], mcp: [{ name: 'mcp__x__y', server: 'x' } as never, { name: 'bad name!', server: 'x', tool: 'y', readOnly: true }] }, connections);
    assert.deepEqual(tools, []);
  });
});
