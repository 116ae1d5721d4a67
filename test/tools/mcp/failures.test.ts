// Servers that fail: missing, hanging at start, answering garbage, exiting, or no longer offering a
// pinned tool. Each gives the live step a clear is_error result (the pinned tool called in this
// process against the broken server) and the run goes on, nothing of the journal lost (the real
// CLI, once: the run pins its tools with a working server, stops at --max-steps 1 before its first
// MCP call, and then the server's configuration is broken before the run goes on; --keep-worktree:
// .mcp.json is a file of the working tree, and it changed). A server failing during a call, a bad
// .mcp.json and a server that does not start when a run is created, on the real CLI.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertNoStack, assertOneParagraph, fakeEnv, journalJson, journalPaths, lastToolResults, resultText, runCli } from '../../helpers/cli.js';
import { counted, countingServer, serverPids, waitForExit, writeMcpJson } from './helpers.js';
import { trustFolder } from '../../helpers/trust.js';
import type { McpServerConfig } from '../../../src/tools/mcp/config.js';
import { McpConnections } from '../../../src/tools/mcp/connections.js';
import { createMcpTools } from '../../../src/tools/mcp/mcp-tools.js';

const scratch = useScratch();

// Pins the counting server's tools into a new run that stops before calling `tool`, then breaks
// the server as `broken` says and lets the run go on: what the model was told, and the run's end.
async function callWithBrokenServer(tool: string, broken: (counts: string) => Record<string, unknown>) {
  const turns: ScriptTurn[] = [{ tools: [{ name: `mcp__counter__${tool}`, input: tool === 'lookup' ? { key: 'k' } : { to: 'a@b.c', body: 'hi' } }] }, { text: 'Understood: the server failed.' }];
  const fake = await scratch.fake(turns);
  const repo = await scratch.repo();
  const counts = scratch.dir('savepoint-mcp-counts-');
  writeMcpJson(repo.root, { counter: countingServer(counts) });
  // The person trusts this folder and approves its server (docs/trust.md), and again once it changed.
  const config = scratch.dir('savepoint-config-');
  const task = `call ${tool} on a server that breaks`;
  const stopped = await runCli(['run', '--yes', '--no-sandbox', '--max-steps', '1', task], { cwd: repo.root, env: fakeEnv(fake, trustFolder(repo.root, config)) });
  assert.equal(stopped.code, 3, stopped.stderr);
  writeMcpJson(repo.root, { counter: broken(counts) });
  const resumed = await runCli(['run', '--yes', '--no-sandbox', '--keep-worktree', task], { cwd: repo.root, env: fakeEnv(fake, trustFolder(repo.root, config)) });
  assert.equal(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`);
  assertNoStack(resumed.stdout + resumed.stderr);
  const [answer] = lastToolResults(fake.requests.at(-1)!);
  assert.equal(answer?.is_error, true, 'the model gets an is_error result');
  assert.equal(fake.requests.length, 2, 'no model request is sent twice');
  // The resumed run offers the tools pinned in run.json, whatever the broken server offers now.
  const toolNames = (i: number) => (fake.requests[i]!.tools as Array<{ name: string }>).map((definition) => definition.name);
  assert.deepEqual(toolNames(1), toolNames(0));
  assert.ok(toolNames(1).includes(`mcp__counter__${tool}`));
  const paths = await journalPaths(repo.root);
  assert.ok(paths.some((path) => path.endsWith(`-mcp__counter__${tool}.json`)), 'the failed call is a recorded step');
  const run = await journalJson<{ status: string }>(repo.root, paths.find((path) => path.endsWith('run.json'))!);
  assert.equal(run.status, 'finished');
  assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no server is left running');
  return { text: resultText(answer!), counts };
}

// The failure itself, in this process: the pinned tool on McpConnections (as a resumed run makes it
// from run.json) against the broken server, unconfined as under --no-sandbox. What a run does with
// such a result (the pinned tools offered again, the step recorded, the run finished) is the same
// for every failure, and is checked on the real CLI once, below.
const UNCONFINED = { sandbox: () => ({ config: { kind: 'none' as const }, root: process.cwd() }) };

async function callOnBrokenServer(tool: 'lookup' | 'send_mail', entry: Record<string, unknown>, options: { startTimeoutMs?: number } = {}): Promise<string> {
  const name = `mcp__counter__${tool}`;
  const { command, args = [], env = {} } = entry as { command: string; args?: string[]; env?: Record<string, string> };
  const config: McpServerConfig = { name: 'counter', type: 'stdio', command, args, env, source: '.mcp.json' };
  const connections = new McpConnections(new Map([['counter', config]]), { ...UNCONFINED, ...options });
  const [pinned] = createMcpTools({ tools: [{ name, description: 'd', input_schema: { type: 'object' } }], mcp: [{ name, server: 'counter', tool, readOnly: tool === 'lookup' }] }, connections);
  try {
    const result = await pinned!.execute(tool === 'lookup' ? { key: 'k' } : { to: 'a@b.c', body: 'hi' });
    assert.equal(result.isError, true, 'the model gets an is_error result');
    return result.output;
  } finally {
    await connections.close();
  }
}

describe('an MCP server that cannot serve a live step', { concurrency: true }, () => {
  test('a missing command gives an error result naming the command and what it said', async () => {
    const text = await callOnBrokenServer('lookup', { command: 'no-such-mcp-server-anywhere', args: ['--flag'] });
    assert.match(text, /MCP server "counter" \(no-such-mcp-server-anywhere --flag\) could not be started/);
    assert.match(text, /ENOENT/);
    assert.match(text, /did not run/);
  });

  test('a server that hangs at start gives an error result once the start timeout passes', async () => {
    const counts = scratch.dir('savepoint-mcp-counts-');
    const text = await callOnBrokenServer('lookup', countingServer(counts, '--hang'), { startTimeoutMs: 1500 });
    assert.match(text, /did not answer the MCP handshake within 1\.5 s/);
    assert.match(text, /hanging on purpose/, 'the stderr tail is in the message');
    assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no server is left running');
  });

  test('a server that answers garbage gives an error result', async () => {
    const counts = scratch.dir('savepoint-mcp-counts-');
    const text = await callOnBrokenServer('lookup', countingServer(counts, '--garbage'), { startTimeoutMs: 1500 });
    assert.match(text, /MCP server "counter" .* could not be started/);
    assert.match(text, /about to write garbage/);
    assert.match(text, /what it wrote to stdout is not MCP's JSON-RPC \(.*"this is not JSON-RPC" is not valid JSON\)/);
    assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no server is left running');
  });

  test('a server that exits at start gives an error result with its stderr', async () => {
    const counts = scratch.dir('savepoint-mcp-counts-');
    const text = await callOnBrokenServer('send_mail', countingServer(counts, '--exit'));
    assert.match(text, /exited .* before answering the MCP handshake/);
    assert.match(text, /the database at \/nowhere is unreachable/);
  });

  test('in a run: a pinned tool the server no longer offers gets an error result naming it, and is not called; the run offers the pinned tools and finishes', async () => {
    const { text, counts } = await callWithBrokenServer('send_mail', (dir) => countingServer(dir, '--without-send-mail'));
    assert.match(text, /no longer offers the tool "send_mail" \(mcp__counter__send_mail was pinned when this run was created\)/);
    assert.match(text, /It offers now: lookup, snapshot/);
    assert.equal(counted(counts, 'send_mail.calls'), 0);
  });
});

describe('an MCP server that fails during a call', () => {
  test('exiting, or not answering in time, gives an error result saying the outcome is unknown; the next call starts the server anew', async () => {
    const fake = await scratch.fake([
      { tools: [{ name: 'mcp__counter__crash', input: {} }] },
      { tools: [{ name: 'mcp__counter__lookup', input: { key: 'k' } }] },
      { tools: [{ name: 'mcp__counter__stall', input: {} }] },
      { text: 'Understood.' },
    ]);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    writeMcpJson(repo.root, { counter: countingServer(counts, '--with-faults') });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const result = await runCli(['run', '--yes', '--no-sandbox', 'call tools that fail'], { cwd: repo.root, env: fakeEnv(fake, { MCP_TOOL_TIMEOUT: '1500', ...trusted }) });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assertNoStack(result.stdout + result.stderr);
    const [crashed] = lastToolResults(fake.requests[1]!);
    assert.equal(crashed?.is_error, true);
    assert.match(resultText(crashed!), /The MCP server "counter" exited \(or closed its connection\) before answering the call to "crash"; whether the call took effect is unknown, and it was not made again/);
    assert.match(resultText(crashed!), /Its stderr ended with:\n(.*\n)*crashing on purpose$/);
    const [looked] = lastToolResults(fake.requests[2]!);
    assert.equal(resultText(looked!), 'the value of k is 42', 'the next call started the server anew');
    const [stalled] = lastToolResults(fake.requests[3]!);
    assert.equal(stalled?.is_error, true);
    assert.match(resultText(stalled!), /did not answer the call to "stall" within 1\.5 s \(MCP_TOOL_TIMEOUT sets the limit in ms\), so the call was cancelled/);
    assert.deepEqual([counted(counts, 'starts'), counted(counts, 'crash.calls'), counted(counts, 'lookup.calls'), counted(counts, 'stall.calls')], [2, 1, 1, 1]);
    assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no server is left running');
  });
});

// How a command stops on a .mcp.json that does not hold, untrusted (the file read as JSON at all) and
// trusted (a server's entry checked as it is to start). Each entry's own message is checked where
// the file is read, in config.test.ts.
describe('a .mcp.json that does not hold', { concurrency: true }, () => {
  for (const [what, config, key] of [
    ['not JSON', '{"mcpServers": {', /\.mcp\.json: the file is not valid JSON/],
    ['a server without a command', '{"mcpServers": {"db": {"args": ["x"]}}}', /\.mcp\.json: mcpServers key "db" needs "command"/],
  ] as const) {
    test(`${what} stops the command with one paragraph naming the file and the key, before anything runs`, async () => {
      const fake = await scratch.fake([{ text: 'never asked' }]);
      const repo = await scratch.repo({ 'README.md': '# x\n', '.mcp.json': config });
      // A server's entry is checked when it is to start: in a folder the person trusts, once approved
      // (an untrusted folder's servers are left out unread). A file that is not JSON stops either way.
      const trusted = what === 'not JSON' ? {} : trustFolder(repo.root, scratch.dir('savepoint-config-'));
      const result = await runCli(['run', '--yes', '--no-sandbox', 'anything'], { cwd: repo.root, env: fakeEnv(fake, trusted) });
      assert.equal(result.code, 1);
      assert.match(assertOneParagraph(result.stderr), key);
      assert.equal(fake.requests.length, 0);
      assert.deepEqual(await journalPaths(repo.root).catch(() => []), [], 'nothing was recorded');
    });
  }
});

describe('a server that does not start when a run is created', () => {
  test('is said once, its tools are not pinned, and the run goes on with the other servers\' tools', async () => {
    const fake = await scratch.fake([{ tools: [{ name: 'mcp__counter__lookup', input: { key: 'k' } }] }, { text: 'ok' }]);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    // Port 9 (discard) on this machine's loopback: fetch refuses it before connecting ("bad port").
    writeMcpJson(repo.root, { counter: countingServer(counts), broken: countingServer(counts, '--exit'), remote: { type: 'http', url: 'http://127.0.0.1:9/mcp' } });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const result = await runCli(['run', '--yes', '--no-sandbox', 'use what starts'], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(result.code, 0, result.stderr);
    // The note is word-wrapped to the width, and where it breaks depends on how long this checkout's path is.
    const note = result.stdout.replace(/\s+/g, ' ');
    assert.match(note, /MCP server "broken" is not offered to this run: .*the database at \/nowhere is unreachable.* \(its log: \.git\/savepoint\/mcp\/broken\.log\)/);
    // An HTTP server has no log of savepoint's: none is named. Why it failed is.
    assert.match(note, /MCP server "remote" is not offered to this run: .*could not be started: fetch failed \(bad port\)\. It wrote nothing to stderr\.(?! \(its log)/);
    // A server's stderr goes to its log, never the terminal: the working one's too.
    assert.doesNotMatch(result.stdout + result.stderr, /counting server ready/);
    assert.match(readFileSync(join(repo.root, '.git', 'savepoint', 'mcp', 'counter.log'), 'utf8'), /counting server ready/);
    assert.match(readFileSync(join(repo.root, '.git', 'savepoint', 'mcp', 'broken.log'), 'utf8'), /the database at \/nowhere is unreachable/);
    const offered = (fake.requests[0]!.tools as Array<{ name: string }>).map((tool) => tool.name).filter((name) => name.startsWith('mcp__'));
    assert.deepEqual(offered, ['mcp__counter__lookup', 'mcp__counter__send_mail', 'mcp__counter__snapshot']);
    assert.equal(counted(counts, 'lookup.calls'), 1);
    const json = await runCli(['run', '--yes', '--no-sandbox', '--json', '--fresh', 'use what starts'], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    const events = json.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; server?: string; log?: string }).filter((line) => line.type === 'mcp-unavailable');
    assert.deepEqual(events.map((event) => event.server).sort(), ['broken', 'remote']);
    assert.equal(events.find((event) => event.server === 'broken')?.log, join(repo.root, '.git', 'savepoint', 'mcp', 'broken.log'));
    assert.equal(events.find((event) => event.server === 'remote')?.log, undefined);
  });
});
