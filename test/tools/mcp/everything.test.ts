// Against a real server from npm, @modelcontextprotocol/server-everything (a devDependency, run
// from node_modules with no network): its results (text, an image, structured content, isError)
// are recorded whole and handed back exactly on replay (a run resumed after its first results sends
// them to the model as the live run did), a secret in the server's configuration never reaches the
// journal, and `savepoint mcp list` shows its tools with their annotations. Approval with the
// tests' own server: a read-only tool runs without asking, any other needs approval.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertOneParagraph, fakeEnv, gitOut, journalJson, journalPaths, lastToolResults, REPLAYED, resultText, runCli } from '../../helpers/cli.js';
import { counted, countingServer, writeMcpJson } from './helpers.js';
import { trustFolder } from '../../helpers/trust.js';
import { rewriteJournalFiles } from '../../helpers/git.js';

const scratch = useScratch();
const EVERYTHING = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const SECRET = 'mcp-secret-value-7f3a9c81d2';
const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { SERVICE_API_TOKEN: SECRET } };

describe('server-everything from npm', { concurrency: true }, () => {
  test('its results are recorded whole, replayed exactly, and a secret of its configuration is redacted', async () => {
    const turns: ScriptTurn[] = [
      { tools: [{ name: 'mcp__everything__echo', input: { message: 'hello over MCP' } }, { name: 'mcp__everything__get-tiny-image', input: {} }] },
      { tools: [{ name: 'mcp__everything__get-structured-content', input: { location: 'Chicago' } }, { name: 'mcp__everything__get-env', input: {} }, { name: 'mcp__everything__get-sum', input: { a: 'one', b: 'two' } }] },
      { text: 'Seen everything.' },
    ];
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo();
    writeMcpJson(repo.root, { everything });
    // The person trusts this folder and approves its server (docs/trust.md).
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const args = ['run', '--yes', '--no-sandbox', 'try the everything server'];
    // Stopped after the second model call (its request holds the echo's and the image's results), then resumed.
    const stopped = await runCli([...args.slice(0, 3), '--max-steps', '4', ...args.slice(3)], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(stopped.code, 3, stopped.stderr);
    const first = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(fake.requests.length, 3);
    // The resumed process sends the replayed results exactly as the live one sent them (the cache mark aside).
    const unmarked = (messages: unknown[]) => JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === 'cache_control' ? undefined : value))) as unknown[];
    assert.deepEqual(unmarked(fake.requests[2]!.messages.slice(0, fake.requests[1]!.messages.length)), unmarked(fake.requests[1]!.messages));

    // The model reads text, and a line for each binary part.
    const [echo, image] = lastToolResults(fake.requests[1]!);
    assert.match(resultText(echo!), /hello over MCP/);
    assert.match(resultText(image!), /\[image: image\/png, [\d.]+ (KB|bytes)\]/);
    // A new run sends the image itself too, after that line, as an image block.
    const sentImage = (image!.content as Array<{ type: string; source?: { media_type: string; data: string } }>).find((block) => block.type === 'image');
    assert.equal(sentImage?.source?.media_type, 'image/png');
    const [structured, env, sum] = lastToolResults(fake.requests[2]!);
    assert.match(resultText(structured!), /temperature/);
    assert.equal(sum?.is_error, true, 'the server\'s isError reaches the model');
    assert.match(resultText(env!), /\[REDACTED:MCP_EVERYTHING_SERVICE_API_TOKEN\]/, 'the model sees the placeholder');
    assert.doesNotMatch(resultText(env!), new RegExp(SECRET));

    // The journal keeps the server's whole result: the image's data, the structured content.
    const paths = await journalPaths(repo.root);
    const imageStep = await journalJson<{ result: { mcp: { content: Array<{ type: string; data?: string; mimeType?: string }> } } }>(repo.root, paths.find((path) => path.endsWith('-mcp__everything__get-tiny-image.json'))!);
    const part = imageStep.result.mcp.content.find((c) => c.type === 'image');
    assert.equal(part?.mimeType, 'image/png');
    assert.ok((part?.data?.length ?? 0) > 100, 'the image data is kept whole');
    assert.equal(sentImage?.source?.data, part?.data, 'the model got the bytes the server sent');
    const structuredStep = await journalJson<{ result: { mcp: { structuredContent: { temperature: number } } } }>(repo.root, paths.find((path) => path.endsWith('-mcp__everything__get-structured-content.json'))!);
    assert.equal(typeof structuredStep.result.mcp.structuredContent.temperature, 'number');
    const sumStep = await journalJson<{ result: { isError: boolean; mcp: { isError: boolean } } }>(repo.root, paths.find((path) => path.endsWith('-mcp__everything__get-sum.json'))!);
    assert.deepEqual([sumStep.result.isError, sumStep.result.mcp.isError], [true, true]);
    const history = await gitOut(repo.root, ['log', '-p', 'agent-journal']);
    assert.ok(!history.includes(SECRET), 'the secret is nowhere in the journal');
    const run = await journalJson<{ config: { tools: Array<{ name: string }>; mcp: Array<{ name: string; readOnly: boolean }> } }>(repo.root, paths.find((path) => path.endsWith('run.json'))!);
    assert.ok(run.config.tools.some((tool) => tool.name === 'mcp__everything__echo'), 'the tools are pinned with the run');
    assert.equal(run.config.mcp.find((pin) => pin.name === 'mcp__everything__get-env')?.readOnly, true);

    // Replayed, the recorded results rebuild the same requests: no divergence, nothing asked.
    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(fake.requests.length, 3);
    assert.equal(again.stdout.split('\n').filter((line) => line.includes(`${REPLAYED}  mcp__everything__`)).length, 5, again.stdout);
  });

  test('a run recorded before images were sent (its pinned configuration says nothing of them) replays an MCP image as its text line', async () => {
    const fake = await scratch.fake([{ tools: [{ name: 'mcp__everything__get-tiny-image', input: {} }] }, { text: 'Seen.' }]);
    const repo = await scratch.repo();
    writeMcpJson(repo.root, { everything });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const args = ['run', '--yes', '--no-sandbox', '--run', 'older', 'look at the image'];
    const stopped = await runCli([...args.slice(0, 3), '--max-steps', '2', ...args.slice(3)], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(stopped.code, 3, stopped.stderr);
    // The run as an older savepoint recorded it: no toolImages in its pinned configuration.
    const record = await journalJson<{ config: Record<string, unknown> }>(repo.root, 'runs/older/run.json');
    assert.equal(record.config.toolImages, true);
    delete record.config.toolImages;
    await rewriteJournalFiles(repo.root, { 'runs/older/run.json': `${JSON.stringify(record, null, 2)}\n` });
    const resumed = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(resumed.code, 0, resumed.stderr);
    const [image] = lastToolResults(fake.requests.at(-1)!);
    assert.equal(typeof image!.content, 'string', 'text only, as the run was recorded');
    assert.match(resultText(image!), /^\[image: image\/png, [\d.]+ (KB|bytes)\]$/m);
  });

  test('savepoint mcp list shows each server, whether it starts, and its tools with their annotations', async () => {
    const repo = await scratch.repo();
    writeMcpJson(repo.root, { everything, gone: { command: 'no-such-mcp-server-anywhere' } });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const listed = await runCli(['mcp', 'list', '--json'], { cwd: repo.root, env: trusted });
    assert.equal(listed.code, 1, 'a server that does not start makes the exit code 1');
    const { servers } = JSON.parse(listed.stdout) as { servers: Array<{ name: string; starts: boolean; error?: string; tools: Array<{ name: string; annotations: Record<string, unknown> }> }> };
    const byName = new Map(servers.map((server) => [server.name, server]));
    assert.equal(byName.get('everything')?.starts, true);
    assert.equal(byName.get('everything')?.tools.find((tool) => tool.name === 'mcp__everything__echo')?.annotations.readOnlyHint, true);
    assert.equal(byName.get('gone')?.starts, false);
    assert.match(byName.get('gone')?.error ?? '', /no-such-mcp-server-anywhere.*ENOENT/s);
    const human = await runCli(['mcp', 'list'], { cwd: repo.root, env: trusted });
    assert.match(human.stdout, /mcp__everything__echo {2}read-only: replays, no approval/);
    assert.match(human.stdout, /gone .*\n {2}does not start: /);
  });
});

describe('approval of MCP tools', () => {
  test('a read-only tool runs without asking; a destructive one needs approval, and with no terminal nothing runs', async () => {
    const fake = await scratch.fake([
      { tools: [{ name: 'mcp__counter__lookup', input: { key: 'k' } }] },
      { tools: [{ name: 'mcp__counter__send_mail', input: { to: 'a@b.c', body: 'hi' } }] },
      { text: 'done' },
    ]);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    writeMcpJson(repo.root, { counter: countingServer(counts) });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const result = await runCli(['run', '--no-sandbox', 'look up and mail'], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(result.code, 1);
    assert.match(assertOneParagraph(result.stderr), /The next step \(mcp__counter__send_mail .*\) needs approval/);
    assert.equal(counted(counts, 'lookup.calls'), 1);
    assert.equal(counted(counts, 'send_mail.calls'), 0);
  });
});
