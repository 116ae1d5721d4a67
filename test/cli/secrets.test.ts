// Secrets, end to end: a secret in the environment is echoed by a command, written into files by a
// command (one of them staged with git add), quoted by the model in a write_file and in its final
// answer, and an AWS-shaped key from an innocently named variable is written to a file; none of it may appear anywhere in `git log -p
// agent-journal` (entries, commit messages, checkpoints) nor in any object the branch reaches. The
// model's later requests hold the redacted text, so a replay sends exactly what the live run sent.
// These commands read the environment and run git add, so they run unconfined (--no-sandbox).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { assertStepModes, fakeEnv, lastToolResults, resultText, runCli } from '../helpers/cli.js';

const scratch = useScratch();

// Made at run time: no literal secret or key shape sits in this file.
const SECRET = `dpl-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
const AWS_KEY = ['AKIA', 'Z7Q2', 'X9W4', 'V6T8', 'R3P5'].join('');

describe('secrets never reach the journal', () => {
  test('a secret echoed by a command, written into files by the agent and quoted by the model appears nowhere in git log -p agent-journal', async () => {
    const turns: ScriptTurn[] = [
      { text: 'Checking the token.', tools: [{ name: 'run_bash', input: { command: 'echo "token is $DEPLOY_TOKEN"' } }] },
      {
        text: 'Writing the config.',
        tools: [
          { name: 'run_bash', input: { command: `echo "DEPLOY_TOKEN=$DEPLOY_TOKEN" > deploy.env && git add deploy.env && printf 'aws_key=%s\\n' "$DEPLOY_ACCOUNT" > aws.txt` } },
          { name: 'write_file', input: { path: 'config/settings.txt', content: `token: ${SECRET}\nregion: eu\n` } },
        ],
      },
      { tools: [{ name: 'read_file', input: { path: 'deploy.env' } }] },
      { text: `Done. The token ${SECRET} is in deploy.env.` },
    ];
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo({ 'README.md': '# deploy\n' });
    // DEPLOY_ACCOUNT is not named like a secret: only its AWS shape gives it away.
    const env = fakeEnv(fake, { DEPLOY_TOKEN: SECRET, DEPLOY_ACCOUNT: AWS_KEY });

    const result = await runCli(['run', '--yes', '--no-sandbox', 'write the deploy config'], { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);
    // The agent's work on disk is the real thing: the command wrote the real secret.
    assert.equal(repo.read('deploy.env'), `DEPLOY_TOKEN=${SECRET}\n`);
    assert.equal(repo.read('aws.txt'), `aws_key=${AWS_KEY}\n`);

    // The journal, as git shows it: every entry, commit message and checkpoint diff.
    const log = await gitOut(repo.root, ['log', '-p', '--binary', '--format=%H%n%B', 'agent-journal']);
    assert.ok(!log.includes(SECRET), 'the environment secret appears nowhere in git log -p agent-journal');
    assert.ok(!log.includes(AWS_KEY), 'the AWS key appears nowhere in git log -p agent-journal');
    assert.match(log, /\[REDACTED:DEPLOY_TOKEN\]/);
    assert.match(log, /\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]/);
    // In the checkpoints: the files are there, with the secret replaced.
    const run = (await gitOut(repo.root, ['ls-tree', '--name-only', 'agent-journal:runs'])).split('\n')[0]!;
    assert.equal(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/deploy.env`]), 'DEPLOY_TOKEN=[REDACTED:DEPLOY_TOKEN]');
    assert.match(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/aws.txt`]), /^aws_key=\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]$/);

    // Every object the branch reaches, whatever git log shows or not.
    const objects = spawnSync('sh', ['-c', 'git rev-list --objects agent-journal | cut -d" " -f1 | git cat-file --batch'], { cwd: repo.root, maxBuffer: 256 * 1024 * 1024 });
    assert.equal(objects.status, 0, String(objects.stderr));
    const bytes = objects.stdout as Buffer;
    assert.ok(bytes.length > 1000);
    assert.equal(bytes.indexOf(SECRET), -1, 'no object reachable from agent-journal holds the secret');
    assert.equal(bytes.indexOf(AWS_KEY), -1, 'no object reachable from agent-journal holds the AWS key');

    // What the model was sent after the command: the redacted output (README: the model's later
    // requests hold the redacted text). No request ever carried the secret.
    const afterEcho = fake.requests[1]!;
    assert.match(resultText(lastToolResults(afterEcho)[0]!), /token is \[REDACTED:DEPLOY_TOKEN\]/);
    for (const [i, body] of fake.requests.entries()) {
      const text = JSON.stringify(body);
      assert.ok(!text.includes(SECRET), `request ${i + 1} holds no secret`);
      assert.ok(!text.includes(AWS_KEY), `request ${i + 1} holds no AWS key`);
    }
    // The model's own quote of the secret was recorded redacted, yet the file it asked to write got
    // the real value (the effect runs with what the model wrote); the answer on screen is redacted.
    assert.equal(repo.read('config/settings.txt'), `token: ${SECRET}\nregion: eu\n`);
    // (The text a live model streams is shown as it arrives, before anything is recorded; the final
    // answer printed at the end is the recorded one.)
    const final = result.stdout.slice(result.stdout.lastIndexOf('Final answer'));
    assert.match(final, /The token \[REDACTED:DEPLOY_TOKEN\] is in deploy\.env/);
    assert.ok(!final.includes(SECRET));

    // Replay: the same command replays everything, no model call, same answer.
    const calls = fake.requests.length;
    const replay = await runCli(['run', '--yes', '--no-sandbox', 'write the deploy config'], { cwd: repo.root, env });
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(fake.requests.length, calls);
    assertStepModes(replay.stdout, 9, 'the replay');
    assert.match(replay.stdout, /The token \[REDACTED:DEPLOY_TOKEN\] is in deploy\.env/);
  });

  test('a secret typed into the task is redacted before it names the run or reaches run.json and commit subjects', async () => {
    const fake = await scratch.fake([{ text: 'Noted.' }]);
    const repo = await scratch.repo({ 'README.md': '# deploy\n' });
    const env = fakeEnv(fake, { DEPLOY_TOKEN: SECRET });
    const task = `rotate the deploy token ${SECRET}`;
    const result = await runCli(['run', '--yes', task], { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);
    const log = await gitOut(repo.root, ['log', '-p', '--format=%H%n%B', 'agent-journal']);
    assert.ok(!log.includes(SECRET), 'the task secret appears nowhere in git log -p agent-journal');
    const runs = await gitOut(repo.root, ['ls-tree', '--name-only', 'agent-journal:runs']);
    assert.ok(!runs.includes(SECRET.toLowerCase()), 'nor in the run id');
    assert.match(log, /"task": "rotate the deploy token \[REDACTED:DEPLOY_TOKEN\]"/);
    // The identical command finds the same run again.
    const again = await runCli(['run', '--yes', task], { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(fake.requests.length, 1);
  });
});
