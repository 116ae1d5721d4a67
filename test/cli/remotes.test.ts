// `savepoint run --push origin` against a real smart-HTTP remote on 127.0.0.1 (git http-backend
// behind test/helpers/git-http-server.ts) that goes down, slows down, hangs, and answers 500 after
// taking a push; the model is the tests' Messages API server. A run keeps going through all of it:
// pure steps never wait for a push, a command waits until the remote has its start, and the run
// ends with the remote holding the same journal as the machine, or saying exactly what it lacks.
// Nothing here asserts a duration: the remote's delays are the setting, the assertions count.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertNoStack, assistantMessages, fakeEnv, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { gitOut, journalFiles, runGit } from '../helpers/git.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { useScratch } from '../helpers/scratch.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';

const scratch = useScratch();

// A project with `origin` served over smart HTTP.
async function project(): Promise<{ root: string; remote: GitHttpServer }> {
  const repo = await scratch.repo({ 'README.md': '# project\n', 'a.txt': 'a\n' });
  const remote = await startGitHttpServer(scratch.dir('savepoint-remote-'));
  scratch.defer(() => remote.close());
  await gitOut(repo.root, ['remote', 'add', 'origin', remote.url]);
  return { root: repo.root, remote };
}

// What the run told the person, stdout and stderr, on one line: messages wrap at the terminal's width.
const said = (result: { stdout: string; stderr: string }) => `${result.stdout} ${result.stderr}`.replace(/\s+/g, ' ');

const tip = (gitDir: string) => gitOut(gitDir, ['rev-parse', '--verify', '-q', 'refs/heads/agent-journal']);

// The remote has exactly the machine's journal, and git fsck --strict finds nothing wrong there.
async function assertRemoteHasAll(root: string, remote: GitHttpServer): Promise<void> {
  assert.equal(await tip(remote.dir), await tip(root), 'the remote ends with the same journal as the machine');
  await gitOut(remote.dir, ['fsck', '--strict', '--no-progress']);
}

// Answers by the number of assistant messages so far; `onTurn` sees each turn's index first.
function turnsOf(turns: ScriptTurn[], onTurn: (index: number) => void = () => {}): (body: MessagesBody) => ScriptTurn {
  return (body) => {
    const index = assistantMessages(body);
    onTurn(index);
    return turns[index] ?? { text: 'done' };
  };
}

const write = (path: string, content: string): ScriptTurn => ({ tools: [{ name: 'write_file', input: { path, content } }] });
const bash = (command: string): ScriptTurn => ({ tools: [{ name: 'run_bash', input: { command } }] });

describe('--push to a remote that misbehaves', { concurrency: true }, () => {
  test('a remote down for about 3 s in the middle of the run does not end it: pushes retry, pure steps go on, and the remote ends with the whole journal', async () => {
    const { root, remote } = await project();
    let stoppedAt = 0;
    const fake = await scratch.fake(
      turnsOf([write('b.txt', 'b\n'), write('c.txt', 'c\n'), { tools: [{ name: 'read_file', input: { path: 'a.txt' } }] }, bash('cat a.txt b.txt c.txt'), { text: 'done' }], (index) => {
        if (index === 1 && !stoppedAt) {
          stoppedAt = Date.now();
          void remote.stop();
        }
      }),
    );
    const cli = startCli(['run', '--yes', '--no-sandbox', '--push', 'origin', '--push-retry', '60', 'write and cat'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    // Pure steps go on while the remote is down: the model is asked for turn 3 after the write and
    // the read it answered meanwhile were recorded.
    await waitUntil(() => fake.requests.length >= 4 && /tried again/.test(said(cli)), 'the run going on with the remote down', { child: cli });
    const local = await journalFiles(root);
    assert.ok(local.some((p) => p.endsWith('000006-read_file.json')), 'the read was recorded while the remote was down');
    while (Date.now() - stoppedAt < 3000) await new Promise((resolve) => setTimeout(resolve, 100));
    await remote.start();
    const result = await cli.result;
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(said(result), /Pushing the journal to origin failed \(.*(Failed to connect|Couldn't connect|Connection refused).*\); the run goes on, and the push is tried again in/);
    assert.match(said(result), /Pushes to origin land again/);
    assert.ok(said(result).indexOf('land again') < said(result).indexOf('run_bash "cat'), 'the command ran once the remote had its start');
    assert.match(result.stdout, /exit 0/);
    assert.match(said(result), /Final answer done/);
    assertNoStack(result.stderr);
    await assertRemoteHasAll(root, remote);
  });

  test('a slowed remote (each answer 1 s late) does not slow the pure steps: fewer pushes than steps, and the command ran only once its intent was on the remote', async (t) => {
    const { root, remote } = await project();
    remote.behave({ delayMs: 1000 });
    const writes = Array.from({ length: 8 }, (_, i) => write(`f${i}.txt`, `${i}\n`));
    // The command looks at the remote's own repository: its intent must already be there.
    const command = `git --git-dir=${remote.dir} ls-tree -r --name-only agent-journal | grep -c 'run_bash.intent.json'`;
    const fake = await scratch.fake(turnsOf([...writes, bash(command), { text: 'done' }]));
    const result = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'write files slowly pushed'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /exit 0: 1\b/, 'the intent was on the remote when the command ran');
    const steps = (await journalFiles(root)).filter((p) => /\/steps\/.*\d{6}-[a-z_]+\.json$/.test(p)).length;
    assert.equal(steps, 19, '10 model calls (the last one the final answer), 8 writes and 1 command');
    t.diagnostic(`${remote.pushes()} pushes for ${steps} steps`);
    assert.ok(remote.pushes() < steps / 2, `pushes carry many steps each: ${remote.pushes()} pushes for ${steps} steps`);
    await assertRemoteHasAll(root, remote);
  });

  test('a hung remote (takes the connection, never answers) gets a clear message after --push-timeout, and the run stops before its command; the same command goes on later', async () => {
    const { root, remote } = await project();
    remote.behave({ hang: true });
    const fake = await scratch.fake(turnsOf([bash('touch ran.txt && echo ran'), { text: 'done' }]));
    const args = ['run', '--yes', '--no-sandbox', '--push', 'origin', '--push-timeout', '1', '--push-retry', '2', 'touch ran'];
    const stopped = await runCli(args, { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(stopped.code, 1, `${stopped.stdout}\n${stopped.stderr}`);
    assert.match(said(stopped), /git got no answer within 1 s \(--push-timeout\)/);
    assert.match(said(stopped), /savepoint: The journal could not be pushed to origin for [\d.]+ s \(git got no answer within 1 s \(--push-timeout\)\), so run \S+ stops here, before run_bash/);
    assert.match(said(stopped), /run the same command again to go on/);
    assert.match(said(stopped), /Not on origin: step 1 and the run's record \(run\.json\).*push them later with: git push origin agent-journal/);
    assertNoStack(stopped.stderr);
    assert.ok(!existsSync(join(root, 'ran.txt')), 'the command did not run');
    assert.ok(!(await journalFiles(root)).some((p) => p.includes('000002-run_bash')), 'not even its intent was recorded: nothing is in flight');
    // The remote answers again: the same command goes on, runs the command once, and pushes it all.
    // With the default --push-timeout: under load a push to the answering remote took over the 1 s
    // that made the hang quick to see, and the run stopped again.
    remote.behave({ hang: false });
    const again = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'touch ran'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.match(again.stdout, /exit 0: ran/);
    assert.ok(existsSync(join(root, 'ran.txt')));
    await assertRemoteHasAll(root, remote);
  });

  test('a remote answering 500 is retried until it takes the push; one answering 403 is final and stops the run with a clear message', async () => {
    const busy = await project();
    busy.remote.behave({ refuse: 500 });
    const fake = await scratch.fake(
      turnsOf([write('b.txt', 'b\n'), bash('echo hi'), { text: 'done' }], (index) => {
        if (index === 1) setTimeout(() => busy.remote.behave({ refuse: 0 }), 1500); // busy for a while, then well
      }),
    );
    const ok = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'busy remote'], { cwd: busy.root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
    assert.match(said(ok), /Pushing the journal to origin failed \(.*?returned error: 500\); the run goes on, and the push is tried again/);
    await assertRemoteHasAll(busy.root, busy.remote);

    const denied = await project();
    denied.remote.behave({ refuse: 403 });
    const stopped = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'denied remote'], { cwd: denied.root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(stopped.code, 1, `${stopped.stdout}\n${stopped.stderr}`);
    assert.match(said(stopped), /savepoint: Pushing the journal to origin failed: .*returned error: 403.*The step is recorded locally/);
    assert.doesNotMatch(said(stopped), /tried again/, 'a refusal is not retried');
    assert.ok(!(await journalFiles(denied.root)).some((p) => p.includes('run_bash.intent')), 'the command was not started');
    assertNoStack(stopped.stderr);
  });

  test('Ctrl-C while a command waits for a hung remote stops the run at once, the command not run and not in flight', async () => {
    const { root, remote } = await project();
    remote.behave({ hang: true });
    const fake = await scratch.fake(turnsOf([bash('touch ran.txt'), { text: 'done' }]));
    // --push fetches origin's journal first: the hung remote holds that fetch for --push-timeout.
    const cli = startCli(['run', '--yes', '--no-sandbox', '--push', 'origin', '--push-timeout', '2', 'touch ran when pushed'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    // The model asked for the command; the run now waits for the remote to have step 1.
    await waitUntil(() => /#1 .*calls run_bash/.test(said(cli)), 'the model asking for the command', { child: cli });
    cli.child.kill('SIGINT');
    const result = await cli.result;
    assert.equal(result.code, 130, `${result.stdout}\n${result.stderr}`);
    assert.ok(!existsSync(join(root, 'ran.txt')), 'the command did not run');
    assert.ok(!(await journalFiles(root)).some((p) => p.includes('000002-run_bash')), 'nothing of it was recorded: it is not in flight');
    assert.match(said(result), /Not on origin: step 1 and the run's record \(run\.json\)/);
    assertNoStack(result.stderr);
  });

  test('a push git reports as failed but that reached the remote (a proxy answering 500 after the remote took it) says so, and the run goes on', async () => {
    const { root, remote } = await project();
    remote.behave({ failAfterPush: 500 });
    const fake = await scratch.fake(turnsOf([write('b.txt', 'b\n'), bash('echo hi'), { text: 'done' }]));
    const result = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'write and say hi'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(said(result), /The push reached origin but git reported a failure \((?:(?!\)).)+\): origin has the journal up to [0-9a-f]{12}, so nothing is lost/);
    assert.doesNotMatch(said(result), /Pushing the journal to origin failed|could not be pushed|Not on origin/);
    assert.equal(said(result).split('The push reached origin').length - 1, 1, 'said once, not at every push');
    assert.ok(remote.pushes() >= 2, 'every push got the 500, and each landed');
    await assertRemoteHasAll(root, remote);
  });

  test('a push whose local reference-transaction hook fails after the remote took it says it reached the remote', async () => {
    const { root, remote } = await project();
    // Refuses the update of the remote-tracking ref that git makes once the remote has the push.
    const hook = join(root, '.git', 'hooks', 'reference-transaction');
    mkdirSync(dirname(hook), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/remotes/*) [ "$1" = prepared ] && exit 1;; esac; done\nexit 0\n');
    chmodSync(hook, 0o755);
    const fake = await scratch.fake(turnsOf([write('b.txt', 'b\n'), { text: 'done' }]));
    const result = await runCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'write b with a hook'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(said(result), /The push reached origin but git reported a failure \(fatal: ref updates aborted by hook\): origin has the journal up to [0-9a-f]{12}, so nothing is lost/);
    assert.doesNotMatch(said(result), /Pushing the journal to origin failed|could not be pushed|Not on origin/);
    await assertRemoteHasAll(root, remote);
  });

  test('--push-timeout and --push-retry take seconds above 0, and so do $SAVEPOINT_PUSH_TIMEOUT and $SAVEPOINT_PUSH_RETRY', async () => {
    const { root } = await project();
    const fake = await scratch.fake([{ text: 'done' }]);
    const flag = await runCli(['run', '--push', 'origin', '--push-timeout', '0', 'say done'], { cwd: root, env: fakeEnv(fake) });
    assert.equal(flag.code, 2, flag.stderr);
    assert.match(said(flag), /--push-timeout needs a number above 0, not "0"/);
    const env = await runCli(['run', '--push', 'origin', 'say done'], { cwd: root, env: fakeEnv(fake, { SAVEPOINT_PUSH_RETRY: 'soon' }) });
    assert.equal(env.code, 2, env.stderr);
    assert.match(said(env), /SAVEPOINT_PUSH_RETRY needs a number of seconds above 0 \(as --push-retry takes\), not "soon"/);
    assert.equal(fake.requests.length, 0, 'nothing ran');
    assertNoStack(env.stderr);
  });

  test('Ctrl-C with the remote down names the steps that did not reach it and the command that pushes them', async () => {
    const { root, remote } = await project();
    await remote.stop();
    const hold = new Set([2]);
    const fake = await scratch.fake([write('b.txt', 'b\n'), write('c.txt', 'c\n'), { text: 'done' }], hold);
    const cli = startCli(['run', '--yes', '--no-sandbox', '--push', 'origin', 'write two files'], { cwd: root, env: fakeEnv(fake), timeoutMs: 120_000 });
    await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: cli });
    cli.child.kill('SIGINT');
    const result = await cli.result;
    assert.equal(result.code, 130, `${result.stdout}\n${result.stderr}`);
    assert.match(said(result), /Not on origin: steps 1, 2, 3, 4 and the run's record \(run\.json\) \(.*\)\. They are recorded here; push them later with: git push origin agent-journal/);
    assertNoStack(result.stderr);
    // The command it named does it.
    await remote.start();
    assert.equal((await runGit(root, ['push', '-q', 'origin', 'agent-journal'])).code, 0);
    await assertRemoteHasAll(root, remote);
  });
});
