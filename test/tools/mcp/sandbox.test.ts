// Stdio MCP servers run in the run's sandbox, like commands, through the real CLI and a real
// bubblewrap: the tests' probe server (fixtures/probe-server.mjs) reports what it could do from where
// it ran. In the sandbox it cannot write outside the working tree, nor .git, nor a file that decides
// what runs; it reaches no network unless the person's settings give that server `network` (or the
// run --allow-network); no secret-named variable of savepoint's environment reaches it while its
// configuration's own variables do; the run's header says where servers run. --no-sandbox starts it
// unconfined; `savepoint mcp list` starts it the same way; without bubblewrap the run is refused
// before any server starts; and a kill -9 of savepoint leaves no sandboxed server behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { bundledFixture } from '../../helpers/library.js';
import { useScratch } from '../../helpers/scratch.js';
import { countingListener, noSandboxReason } from '../../helpers/sandbox.js';
import { assertOneParagraph, fakeEnv, lastToolResults, resultText, runCli, startCli, waitUntil } from '../../helpers/cli.js';
import { counted, countingServer, waitForNoProcessOf } from './helpers.js';

const scratch = useScratch();

const PROBE_SERVER = bundledFixture(fileURLToPath(new URL('./fixtures/probe-server.mjs', import.meta.url)));

interface Seen {
  writes: Record<string, string>;
  connection: string;
  variables: Record<string, string | null>;
  cwd: string;
}

// A listener on 127.0.0.1 that counts the connections it gets.
const listener = () => countingListener(scratch);

// The person's own settings (a user settings file) naming `servers`: what HOME and XDG_CONFIG_HOME to run with.
function personWith(servers: Record<string, unknown>): Record<string, string> {
  const home = scratch.dir('savepoint-home-');
  const config = join(home, '.config');
  mkdirSync(join(config, 'savepoint'), { recursive: true });
  writeFileSync(join(config, 'savepoint', 'settings.json'), JSON.stringify({ mcpServers: servers }));
  return { HOME: home, XDG_CONFIG_HOME: config };
}

// A repository, a path outside it that only an unconfined server can write ($HOME of the tests,
// read-only in the sandbox), a listener, and the probe server's entry looking at all of them.
async function probeSetup(entry: Record<string, unknown> = {}) {
  const repo = await scratch.repo({ 'README.md': '# app\n', 'AGENTS.md': 'Be careful.\n', '.mcp.json': '{"mcpServers": {}}\n' });
  const outside = join(homedir(), `.savepoint-mcp-probe-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  scratch.defer(() => rmSync(outside, { force: true }));
  const net = await listener();
  const writes = [outside, join(repo.root, '.git', 'probe-was-here'), join(repo.root, '.mcp.json'), join(repo.root, 'AGENTS.md'), join(repo.root, 'inside.txt')];
  const probe = {
    command: process.execPath,
    args: [PROBE_SERVER],
    env: { PROBE_WRITES: JSON.stringify(writes), PROBE_PORT: String(net.port), PROBE_VARIABLES: 'SECRET_PROBE_TOKEN,CONFIGURED_VALUE', CONFIGURED_VALUE: 'from its configuration' },
    ...entry,
  };
  return { repo, outside, net, writes, probe };
}

// A run whose model calls the probe's tool once: what the probe saw, and the CLI's output.
async function runProbe(root: string, person: Record<string, string>, flags: string[] = []): Promise<{ seen: Seen; stdout: string }> {
  const turns: ScriptTurn[] = [{ tools: [{ name: 'mcp__probe__probe', input: {} }] }, { text: 'Done.' }];
  const fake = await scratch.fake(turns);
  const result = await runCli(['run', '--yes', ...flags, 'probe the server'], { cwd: root, env: fakeEnv(fake, { ...person, SECRET_PROBE_TOKEN: 'hunter2-never-passed' }) });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  return { seen: JSON.parse(resultText(lastToolResults(fake.requests[1]!)[0]!)) as Seen, stdout: result.stdout };
}

// The output with the header's lines (indented by two spaces, wrapped or not) joined into one.
const unwrapped = (stdout: string) => stdout.replace(/\n  (?=[^ #])/g, ' ');

describe('stdio MCP servers in the sandbox', { skip: noSandboxReason(), concurrency: true }, () => {
  test("a run's server runs in the sandbox: read-only outside the tree, .git and the control files read-only, no network, no secret of savepoint's; the header says so", async () => {
    const { repo, outside, net, writes, probe } = await probeSetup();
    const { seen, stdout } = await runProbe(repo.root, personWith({ probe }));
    assert.deepEqual(
      writes.map((path) => seen.writes[path]),
      ['EROFS', 'EROFS', 'EROFS', 'EROFS', 'ok'],
      `only the working tree is writable: ${JSON.stringify(seen.writes)}`,
    );
    assert.ok(!existsSync(outside), 'nothing was written outside the tree');
    assert.equal(repo.read('.mcp.json'), '{"mcpServers": {}}\n');
    assert.notEqual(seen.connection, 'connected');
    assert.equal(net.connections(), 0, 'the listener got no connection');
    assert.deepEqual(seen.variables, { SECRET_PROBE_TOKEN: null, CONFIGURED_VALUE: 'from its configuration' });
    assert.match(unwrapped(stdout), /commands and MCP servers run in a sandbox: no network; writable: the working tree \(not \.git\) and a private \/tmp, not the files that decide what runs; no secret-named variables \(--no-sandbox to lift\)/);
  });

  test('a server given "network" in the person\'s settings reaches the network, its files still confined; --allow-network gives it to every server', async () => {
    const given = await probeSetup({ network: true });
    const { seen, stdout } = await runProbe(given.repo.root, personWith({ probe: given.probe }));
    assert.equal(seen.connection, 'connected');
    assert.equal(given.net.connections(), 1);
    assert.equal(seen.writes[given.outside], 'EROFS', 'the network is all it was given');
    assert.match(unwrapped(stdout), /commands and MCP servers run in a sandbox: no network \(but for MCP server probe, given it in settings\);/);

    const allowed = await probeSetup();
    const flagged = await runProbe(allowed.repo.root, personWith({ probe: allowed.probe }), ['--allow-network']);
    assert.equal(flagged.seen.connection, 'connected');
    assert.equal(flagged.seen.writes[allowed.outside], 'EROFS');
  });

  test('--no-sandbox starts the server unconfined, and the header says so', async () => {
    const { repo, outside, net, probe } = await probeSetup();
    const { seen, stdout } = await runProbe(repo.root, personWith({ probe }), ['--no-sandbox']);
    assert.equal(seen.writes[outside], 'ok');
    assert.ok(existsSync(outside));
    assert.equal(seen.connection, 'connected');
    assert.equal(net.connections(), 1);
    assert.deepEqual(seen.variables, { SECRET_PROBE_TOKEN: null, CONFIGURED_VALUE: 'from its configuration' }, 'unconfined too, only its configuration and a few defaults reach it');
    assert.match(unwrapped(stdout), /commands and MCP servers run unconfined \(--no-sandbox\)/);
  });

  test('savepoint mcp list starts servers in the sandbox too, unconfined with --no-sandbox', async () => {
    const { repo, outside, probe } = await probeSetup();
    const person = personWith({ probe });
    const describe = async (flags: string[]) => {
      const listed = await runCli(['mcp', 'list', '--json', ...flags], { cwd: repo.root, env: person });
      assert.equal(listed.code, 0, listed.stdout + listed.stderr);
      const { servers } = JSON.parse(listed.stdout) as { servers: Array<{ tools: Array<{ description: string }> }> };
      return JSON.parse(servers[0]!.tools[0]!.description) as Seen;
    };
    const confined = await describe([]);
    assert.equal(confined.writes[outside], 'EROFS');
    assert.equal(confined.writes[join(repo.root, '.mcp.json')], 'EROFS');
    assert.notEqual(confined.connection, 'connected');
    assert.ok(!existsSync(outside));
    const unconfined = await describe(['--no-sandbox']);
    assert.equal(unconfined.writes[outside], 'ok');
    assert.equal(unconfined.connection, 'connected');
  });

  test('a kill -9 of savepoint leaves no sandboxed server (nor its sandbox, nor a guard) behind', async () => {
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    // Counted in the working tree: the one place the sandboxed server may write.
    const counts = join(repo.root, 'counts');
    mkdirSync(counts);
    const turns: ScriptTurn[] = [{ tools: [{ name: 'mcp__counter__send_mail', input: { to: 'ops@example.com', body: '42' } }] }, { text: 'Done.' }];
    const fake = await scratch.fake(turns);
    const person = personWith({ counter: countingServer(counts, undefined, { RELEASE_FILE: join(counts, 'never') }) });
    const first = startCli(['run', '--yes', 'mail it'], { cwd: repo.root, env: fakeEnv(fake, person) });
    // A bound, not a wait: a loaded machine may take long to start savepoint, bwrap and the server.
    await waitUntil(() => counted(counts, 'send_mail.calls') === 1, 'the send_mail call to start', { child: first, timeoutMs: 90_000 });
    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');
    assert.deepEqual(await waitForNoProcessOf(counts), [], 'no server, bwrap or guard process outlives a kill -9 of savepoint');
  });
});

// A directory holding git, bash and sh but no bwrap, for PATH.
function pathWithoutBwrap(): string {
  const bin = join(scratch.dir('savepoint-nobwrap-'), 'bin');
  mkdirSync(bin);
  for (const tool of ['git', 'bash', 'sh']) symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(bin, tool));
  return bin;
}

describe('stdio MCP servers without bubblewrap', { concurrency: true }, () => {
  test('a new run is refused before any server starts; mcp list too; --no-sandbox starts them', async () => {
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const counts = scratch.dir('savepoint-mcp-counts-');
    const person = { ...personWith({ counter: countingServer(counts) }), PATH: pathWithoutBwrap() };
    const fake = await scratch.fake([{ text: 'Done.' }]);
    const refused = await runCli(['run', '--yes', 'list the tools'], { cwd: repo.root, env: fakeEnv(fake, person) });
    assert.equal(refused.code, 1);
    assert.match(assertOneParagraph(refused.stderr), /Commands cannot run in a sandbox here: bubblewrap \(bwrap\) is not installed.*--no-sandbox/);
    assert.equal(counted(counts, 'starts'), 0, 'no server was started unconfined');
    assert.equal(fake.requests.length, 0);
    const listed = await runCli(['mcp', 'list'], { cwd: repo.root, env: person });
    assert.equal(listed.code, 1);
    assert.match(assertOneParagraph(listed.stderr), /Commands cannot run in a sandbox here/);
    assert.equal(counted(counts, 'starts'), 0);
    const allowed = await runCli(['run', '--yes', '--no-sandbox', 'list the tools'], { cwd: repo.root, env: fakeEnv(fake, person) });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(counted(counts, 'starts'), 1);
  });
});
