// A Streamable HTTP MCP server configured in .mcp.json, on the real CLI: reached with its headers,
// its tools pinned and called as journaled steps, its credential header redacted in everything the
// journal holds (the server echoes it), and a finished run replayed without a single request to it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useScratch } from '../../helpers/scratch.js';
import { assertFsckClean, fakeEnv, gitOut, lastToolResults, REPLAYED, resultText, runCli } from '../../helpers/cli.js';
import { startHttpServer, writeMcpJson } from './helpers.js';
import { trustFolder } from '../../helpers/trust.js';

const scratch = useScratch();
const TOKEN = 'http-bearer-5b1e9d27c4a8';

describe('a Streamable HTTP server from .mcp.json', () => {
  test('is reached with its headers, its credential is redacted in the journal, and a finished run replays without reaching it', async () => {
    const server = await startHttpServer();
    scratch.defer(() => server.close());
    const fake = await scratch.fake([{ tools: [{ name: 'mcp__remote__whoami', input: { greeting: 'hello' } }] }, { text: 'Greeted.' }]);
    const repo = await scratch.repo();
    // The token is written into the file itself (an untracked file, so a checkpoint records it, redacted).
    writeMcpJson(repo.root, { remote: { type: 'http', url: server.url, headers: { Authorization: `Bearer ${TOKEN}`, 'X-Source': 'savepoint-test' } } });
    const args = ['run', '--yes', '--no-sandbox', 'greet the remote server'];
    // The person trusts this folder and approves its server (docs/trust.md).
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const first = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(first.code, 0, first.stderr);

    // Offered with the server's own description and input schema.
    const offered = (fake.requests[0]!.tools as Array<{ name: string; description: string; input_schema: { type: string; properties: Record<string, { type: string }> } }>).find((tool) => tool.name === 'mcp__remote__whoami');
    assert.equal(offered?.description, 'Says who the caller is.');
    assert.equal(offered?.input_schema.type, 'object');
    assert.equal(offered?.input_schema.properties.greeting?.type, 'string');
    // The server saw the real headers; the model, and the journal, see placeholders.
    const [answer] = lastToolResults(fake.requests[1]!);
    assert.match(resultText(answer!), /^hello, \[REDACTED:MCP_REMOTE_AUTHORIZATION_TOKEN\] from savepoint-test$/);
    const history = await gitOut(repo.root, ['log', '-p', 'agent-journal']);
    assert.ok(!history.includes(TOKEN), 'the token is nowhere in the journal: not in results, run.json or the checkpoint of .mcp.json');
    assert.match(history, /\[REDACTED:MCP_REMOTE_AUTHORIZATION/);
    await assertFsckClean(repo.root);

    const requests = server.requests;
    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`${REPLAYED.replace(/[()]/g, '\\$&')} {2}mcp__remote__whoami`));
    assert.equal(server.requests, requests, 'replaying a finished run reaches no MCP server');
    assert.equal(fake.requests.length, 2);
  });
});
