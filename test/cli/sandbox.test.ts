// run_bash in bubblewrap, end to end through the CLI: a write to $HOME, a connection to a listener on
// 127.0.0.1, reading the API key from the environment and deleting the journal's ref are each
// blocked; writes inside the repository work and are checkpointed; the choice is recorded in
// run.json; --allow-network, --allow-git-writes and --no-sandbox open what they say; a linked
// worktree's real git directories are read-only too; and where bubblewrap is missing a
// non-interactive run stops, saying how to install it. Skipped where bubblewrap cannot start.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { gitOut, runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { countingListener, noSandboxReason } from '../helpers/sandbox.js';
import { assertOneParagraph, baseEnv, BIN, fakeEnv, journalToolResults, resultText, runCli } from '../helpers/cli.js';

const scratch = useScratch();

const skip = noSandboxReason();

// A listener on 127.0.0.1 that counts the connections it gets.
const listener = () => countingListener(scratch);

// One run_bash call per turn, then a final answer; returns each command's output as the model got it
// (its recorded result: the requests are built from it). The model is a script; the API key is in
// the environment all the same, as the secret a sandboxed command must not see.
let runs = 0;
async function runCommands(root: string, commands: string[], flags: string[] = [], extraEnv: Record<string, string | undefined> = {}) {
  const turns: ScriptTurn[] = [...commands.map((command) => ({ tools: [{ name: 'run_bash', input: { command } }] })), { text: 'Done.' }];
  const run = `sandbox-check-${++runs}`;
  const script = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const env = { ANTHROPIC_API_KEY: 'test-key', ...extraEnv };
  const result = await runCli(['run', '--yes', '--run', run, '--model', `script:${script}`, ...flags, `sandbox check ${runs}`], { cwd: root, env });
  const outputs = (await journalToolResults(root, run)).map(resultText);
  return { result, outputs };
}

async function runRecord(root: string): Promise<Record<string, unknown>> {
  const runs = (await gitOut(root, ['ls-tree', '--name-only', 'agent-journal:runs'])).split('\n');
  return JSON.parse(await gitOut(root, ['show', `agent-journal:runs/${runs.at(-1)}/run.json`])) as Record<string, unknown>;
}

describe('run_bash in the sandbox', { skip }, () => {
  test('a write to $HOME, a connection to 127.0.0.1, the API key and deleting the journal ref are blocked; writes in the repository work and are checkpointed', async () => {
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const net = await listener();
    const probe = join(homedir(), `.savepoint-sandbox-probe-${process.pid}`);
    scratch.defer(() => rmSync(probe, { force: true }));
    const { result, outputs } = await runCommands(repo.root, [
      `echo escaped > "${probe}"; echo "rc=$?"`,
      `(exec 3<>/dev/tcp/127.0.0.1/${net.port}) && echo connected || echo "no connection"`,
      'echo "key=[$ANTHROPIC_API_KEY]"',
      'git update-ref -d refs/heads/agent-journal; echo "rc=$?"',
      'mkdir -p dist && echo built > dist/app.js && echo note > notes.txt && cat dist/app.js',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(outputs[0]!, /Read-only file system\nrc=1/);
    assert.ok(!existsSync(probe), 'nothing was written to $HOME');
    assert.match(outputs[1]!, /no connection/);
    assert.equal(net.connections(), 0, 'the listener got no connection');
    assert.match(outputs[2]!, /^exit 0\nkey=\[\]$/, 'the API key is not in the environment');
    assert.match(outputs[3]!, /Read-only file system[\s\S]*rc=1/);
    assert.match(await gitOut(repo.root, ['rev-parse', 'refs/heads/agent-journal']), /^[0-9a-f]{40}$/, 'the journal ref is still there');
    assert.match(outputs[4]!, /^exit 0\nbuilt$/);
    assert.equal(repo.read('dist/app.js'), 'built\n');
    const run = (await runRecord(repo.root)).id as string;
    assert.equal(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/dist/app.js`]), 'built');
    assert.equal(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/notes.txt`]), 'note');
    const record = await runRecord(repo.root);
    assert.deepEqual(record.sandbox, { kind: 'bwrap', network: false, gitWrites: false });
    assert.deepEqual((record.attempts as Array<{ sandbox: unknown }>)[0]!.sandbox, record.sandbox);
  });

  test('--allow-network and --allow-git-writes open exactly that; --no-sandbox runs unconfined and is recorded', async () => {
    const net = await listener();
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const open = await runCommands(
      repo.root,
      [`(exec 3<>/dev/tcp/127.0.0.1/${net.port}) && echo connected || echo "no connection"`, 'echo x > made.txt && git add made.txt && git commit -qm "agent commit" && git log -1 --format=%s'],
      ['--allow-network', '--allow-git-writes'],
    );
    assert.equal(open.result.code, 0, open.result.stderr);
    assert.match(open.outputs[0]!, /connected/);
    assert.equal(net.connections(), 1);
    assert.match(open.outputs[1]!, /agent commit/);
    assert.equal(await gitOut(repo.root, ['log', '-1', '--format=%s']), 'agent commit');
    assert.deepEqual((await runRecord(repo.root)).sandbox, { kind: 'bwrap', network: true, gitWrites: true });

    const bare = await scratch.repo({ 'README.md': '# app\n' });
    const unconfined = await runCommands(bare.root, ['echo "key=[$ANTHROPIC_API_KEY]"'], ['--no-sandbox']);
    assert.equal(unconfined.result.code, 0, unconfined.result.stderr);
    assert.match(unconfined.outputs[0]!, /key=\[\[REDACTED:ANTHROPIC_API_KEY\]\]/, 'unconfined, the command sees the key (and the journal does not)');
    assert.deepEqual((await runRecord(bare.root)).sandbox, { kind: 'none', network: true, gitWrites: true });
  });

  test("in a linked worktree, the main repository's git directory is read-only too", async () => {
    const main = await scratch.repo({ 'README.md': '# app\n' });
    const linked = join(scratch.dir('savepoint-linked-'), 'wt');
    const added = await runGit(main.root, ['worktree', 'add', '-q', '-b', 'side', linked]);
    assert.equal(added.code, 0, added.stderr);
    const { result, outputs } = await runCommands(linked, [
      'git update-ref -d refs/heads/agent-journal; echo "rc=$?"',
      'echo x > "$(git rev-parse --git-common-dir)/evil"; echo "rc=$?"',
      'echo ok > inside.txt && cat inside.txt',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(outputs[0]!, /rc=1/);
    assert.match(await gitOut(main.root, ['rev-parse', 'refs/heads/agent-journal']), /^[0-9a-f]{40}$/);
    assert.match(outputs[1]!, /Read-only file system\nrc=1/);
    assert.ok(!existsSync(join(main.root, '.git/evil')));
    assert.match(outputs[2]!, /ok$/);
  });
});

// A directory holding git, bash and sh but no bwrap, for PATH.
function pathWithoutBwrap(): string {
  const bin = join(scratch.dir('savepoint-nobwrap-'), 'bin');
  mkdirSync(bin);
  for (const tool of ['git', 'bash', 'sh']) {
    const where = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    symlinkSync(where, join(bin, tool));
  }
  return bin;
}

// Runs the CLI on a terminal (util-linux `script` gives it a pseudo-terminal), typing `early` at
// once (before any question can have appeared) and `answer` once the no-sandbox question is shown.
// Asynchronous, so that a fake Anthropic server in this process could answer it.
function runOnTerminal(args: string[], cwd: string, env: Record<string, string | undefined>, answer: string, early = ''): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, BIN, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  const merged: Record<string, string> = { ...baseEnv(), SHELL: '/bin/sh' };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete merged[name];
  else merged[name] = value;
  const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd, env: merged, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let answered = false;
  const seen = (chunk: string) => {
    output += chunk;
    if (answered || !/\[y\/N\]: /.test(output)) return;
    answered = true;
    child.stdin.end(answer);
  };
  child.stdout.setEncoding('utf8').on('data', seen);
  child.stderr.setEncoding('utf8').on('data', seen);
  if (early) child.stdin.write(early);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ code, output }))));
}
// `--model script:<file>` answering `turns`, for the terminal runs: what they check is the question
// and what runs, not the requests (no HTTP model server: a run on one costs about twice the CPU).
function scriptModel(turns: ScriptTurn[]): string[] {
  const file = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return ['--model', `script:${file}`];
}
const noScript = existsSync('/usr/bin/script') ? undefined : 'util-linux script(1) is not installed, so there is no terminal to answer on';

describe('without bubblewrap', () => {
  test('a non-interactive run stops before anything runs, saying how to install it; --no-sandbox runs', async () => {
    const bin = pathWithoutBwrap();
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const turns: ScriptTurn[] = [{ tools: [{ name: 'run_bash', input: { command: 'echo ran > ran.txt' } }] }, { text: 'Done.' }];
    const fake = await scratch.fake(turns);
    const env = fakeEnv(fake, { PATH: bin });
    const refused = await runCli(['run', '--yes', 'try it'], { cwd: repo.root, env });
    assert.equal(refused.code, 1);
    assert.match(assertOneParagraph(refused.stderr), /bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap.*--no-sandbox/);
    assert.equal(fake.requests.length, 0, 'nothing ran, not even the model');
    assert.ok(!existsSync(join(repo.root, 'ran.txt')));
    const allowed = await runCli(['run', '--yes', '--no-sandbox', 'try it'], { cwd: repo.root, env });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(repo.read('ran.txt'), 'ran\n');
  });

  test('on a terminal it says so once and asks: a yes runs commands unconfined (recorded), a no stops', { skip: noScript }, async () => {
    const env = () => ({ PATH: pathWithoutBwrap() });
    const model = scriptModel([{ tools: [{ name: 'run_bash', input: { command: 'echo ran > ran.txt' } }] }, { text: 'Done.' }]);
    const declined = await scratch.repo({ 'README.md': '# app\n' });
    const no = await runOnTerminal(['run', '--yes', ...model, 'try it'], declined.root, env(), 'n\n');
    assert.equal(no.code, 1, no.output);
    assert.equal((no.output.match(/apt-get install bubblewrap/g) ?? []).length, 2, `the prompt and the stop each say how to install it:\n${no.output}`);
    assert.ok(!existsSync(join(declined.root, 'ran.txt')));
    const accepted = await scratch.repo({ 'README.md': '# app\n' });
    const yes = await runOnTerminal(['run', '--yes', ...model, 'try it'], accepted.root, env(), 'y\n');
    assert.equal(yes.code, 0, yes.output);
    assert.match(yes.output, /Commands cannot run in a sandbox here: bubblewrap \(bwrap\) is not installed/);
    assert.match(yes.output, /Run commands unconfined, with your whole environment and file system\? \[y\/N\]/);
    assert.equal(accepted.read('ran.txt'), 'ran\n');
    assert.deepEqual((await runRecord(accepted.root)).sandbox, { kind: 'none', network: true, gitWrites: true });
  });

  test('a "y" typed before the question appears does not let commands run unconfined: only the answer typed after it counts', { skip: noScript }, async () => {
    const model = scriptModel([{ tools: [{ name: 'run_bash', input: { command: 'echo ran > ran.txt' } }] }, { text: 'Done.' }]);
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const early = await runOnTerminal(['run', '--yes', ...model, 'try it'], repo.root, { PATH: pathWithoutBwrap() }, 'n\n', 'y\n');
    assert.equal(early.code, 1, `the "n" typed after the question decided:\n${early.output}`);
    assert.ok(!existsSync(join(repo.root, 'ran.txt')), 'nothing ran');
  });
});
