// kill -9 at the worst moments, then the identical command again: the real CLI against the fake
// Anthropic server, in real git repositories. Finished steps must come back from the journal (no
// request for a finished turn, no command run twice), and what the model is sent next must always
// be a well-formed conversation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import {
  assertFsckClean,
  assertNoStack,
  assertStepModes,
  assertToolPairing,
  assistantMessages,
  fakeEnv,
  journalJson,
  lastToolResults,
  resultText,
  runCli,
  runIds,
  startCli,
  waitUntil,
  worktreeFiles,
} from '../helpers/cli.js';

const scratch = useScratch();
const repoWith = (files: Record<string, string> = { 'README.md': '# notes\n' }): Promise<TempRepo> => scratch.repo(files);
const fakeWith = (turns: ScriptTurn[], hold = new Set<number>()): Promise<FakeAnthropic> => scratch.fake(turns, hold);
// A directory outside every repository, for marker files a test controls.
// A file the command waits on until the test removes it: in the repository's .git, which the
// sandbox shows the command (read-only) and no checkpoint takes in; under /tmp it would not see it
// (the sandbox's /tmp is its own), end at once, and race the test's kill to the next model call.
function holdFile(repo: TempRepo): string {
  const hold = join(repo.root, '.git', 'savepoint-test-hold');
  writeFileSync(hold, '');
  return hold;
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean);
}

describe('kill -9 and the identical command again', { concurrency: true }, () => {
  describe('kill -9 in the middle of a model call', { concurrency: true }, () => {
    const task = 'keep notes in notes.txt';
    const turns: ScriptTurn[] = [
      { text: 'Creating the notes file.', tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'alpha\n' } }] },
      { tools: [{ name: 'run_bash', input: { command: 'echo beta >> notes.txt' } }] },
      { text: 'Now the edit.', tools: [{ name: 'edit_file', input: { path: 'notes.txt', old_string: 'alpha', new_string: 'gamma' } }] },
      { tools: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
      { text: 'Notes written: gamma and beta.' },
    ];
    const args = ['run', '--yes', task];

    test('the identical command replays the finished steps, asks the server only for the unfinished turns, and ends where an uncrashed run ends', async () => {
      // The third model call (turn index 2) hangs until the process is killed.
      const hold = new Set([2]);
      const fake = await fakeWith(turns, hold);
      const repo = await repoWith();
      const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake) });
      await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: first });
      first.kill();
      const killed = await first.result;
      assert.equal(killed.signal, 'SIGKILL');
      assertStepModes(killed.stdout, 0, 'the first, killed run');
      hold.clear();

      const before = fake.requests.length;
      const second = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(second.code, 0, second.stderr);
      const fresh = fake.requests.slice(before);
      assert.deepEqual(
        fresh.map(assistantMessages),
        [2, 3, 4],
        'after the resume the server is asked for turns 3, 4 and 5 only: no request for a finished turn',
      );
      // Steps 1-4 are two model calls and two tools; step 5 is the call that was killed.
      assertStepModes(second.stdout, 4, 'the resumed run');
      assert.match(second.stdout, /Notes written: gamma and beta\./);
      assertToolPairing(fake.requests);
      await assertFsckClean(repo.root);

      // The same script, never interrupted, in another repository.
      const control = await fakeWith(turns);
      const uncrashed = await repoWith();
      const straight = await runCli(args, { cwd: uncrashed.root, env: fakeEnv(control) });
      assert.equal(straight.code, 0, straight.stderr);
      assertStepModes(straight.stdout, 0, 'the uncrashed run');
      assert.deepEqual(worktreeFiles(repo.root), worktreeFiles(uncrashed.root));
      assert.equal(repo.read('notes.txt'), 'gamma\nbeta\n');
      assert.equal(control.requests.length, 5);
    });
  });

  describe('kill -9 while a command runs', { concurrency: true }, () => {
    const task = 'count once';
    // The command leaves a mark, then waits for a file outside the repository to go away.
    function setup(hold: string): ScriptTurn[] {
      return [
        { text: 'Counting.', tools: [{ name: 'run_bash', input: { command: `echo x >> counter.txt; while [ -e '${hold}' ]; do sleep 0.05; done` } }] },
        { text: 'Counted.' },
      ];
    }

    async function crashDuringCommand(): Promise<{ repo: TempRepo; fake: FakeAnthropic; counter: string }> {
      const repo = await repoWith();
      const hold = holdFile(repo);
      const fake = await fakeWith(setup(hold));
      const counter = join(repo.root, 'counter.txt');
      const first = startCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      // Its mark written, not only its file made: `>>` creates the file an instant before echo writes to it.
      await waitUntil(() => existsSync(counter) && lines(counter).length === 1, 'the command to start', { child: first });
      first.kill();
      await first.result;
      rmSync(hold); // the orphaned command ends now
      assert.deepEqual(lines(counter), ['x']);
      assert.equal(fake.requests.length, 1);
      return { repo, fake, counter };
    }

    test('with --in-flight fail the run stops with a clear message and no stack trace; by default the command is not run again and the model is told its outcome is unknown', async () => {
      const { repo, fake, counter } = await crashDuringCommand();
      const failed = await runCli(['run', '--yes', '--in-flight', 'fail', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /savepoint: Step 2 of run .* was started before a crash and its outcome is unknown/);
      assert.match(failed.stderr, /--in-flight rerun/);
      assertNoStack(failed.stderr);
      assert.deepEqual(lines(counter), ['x'], 'nothing ran again');
      assert.equal(fake.requests.length, 1, 'no model call: the first one replayed');

      const second = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual(lines(counter), ['x'], 'the command did not run a second time');
      assert.equal(fake.requests.length, 2);
      const next = fake.requests[1]!;
      assert.equal(assistantMessages(next), 1);
      const [result, ...rest] = lastToolResults(next);
      assert.equal(rest.length, 0);
      assert.equal(result!.tool_use_id, 'toolu_s0_0');
      assert.equal(result!.is_error, true);
      assert.match(resultText(result!), /outcome is unknown/);
      assert.match(resultText(result!), /not run again/);
      assert.match(second.stdout, /started before a crash/);
      assertStepModes(second.stdout, 1);
      assert.match(second.stdout, /Counted\./);
      assertToolPairing(fake.requests);
      await assertFsckClean(repo.root);
    });

    test('with --in-flight rerun the command runs again', async () => {
      const { repo, fake, counter } = await crashDuringCommand();
      const second = await runCli(['run', '--yes', '--in-flight', 'rerun', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual(lines(counter), ['x', 'x']);
      const [result] = lastToolResults(fake.requests[1]!);
      assert.notEqual(result!.is_error, true);
      assert.match(resultText(result!), /^exit 0/);
      assertToolPairing(fake.requests);
    });

    test('with --in-flight rerun, an attempt killed before it records anything leaves its trace in run.json, and the next open says so', async () => {
      const { repo, fake, counter } = await crashDuringCommand();
      const hold = holdFile(repo); // the command waits again, so the rerun can be killed in it
      const rerun = startCli(['run', '--yes', '--in-flight', 'rerun', task], { cwd: repo.root, env: fakeEnv(fake) });
      await waitUntil(() => lines(counter).length === 2, 'the command to run again', { child: rerun });
      rerun.kill(); // SIGKILL: before the result of the step it was running again
      await rerun.result;
      rmSync(hold);
      const [id] = await runIds(repo.root);
      const record = await journalJson<{ attempts: Array<{ number: number; pid: number; host: string; startedAt: string; rerun?: number; end?: unknown }> }>(repo.root, `runs/${id}/run.json`);
      const second = record.attempts.find((a) => a.number === 2);
      assert.ok(second, `attempt 2 is in run.json: ${JSON.stringify(record.attempts)}`);
      assert.equal(second.pid, rerun.pid, 'by whom');
      assert.equal(second.rerun, 2, 'the step it ran again');
      assert.equal(second.end, undefined);
      assert.match(second.startedAt, /^\d{4}-\d\d-\d\dT/);
      // The next open says how it ended, and so does log.
      const log = await runCli(['log'], { cwd: repo.root, env: {} });
      assert.match(log.stdout, /attempt 2 .*killed before it recorded anything, while running #2 again/);
      const third = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(third.code, 0, third.stderr);
      assert.match(third.stdout.replace(/\s+/g, ' '), new RegExp(`Attempt 2 \\(pid ${rerun.pid} on .*\\) was killed before it recorded anything, while running #2 again`));
      assert.deepEqual(lines(counter), ['x', 'x'], 'reported, not run a third time');
      // And run.json keeps it: the attempt that noticed wrote it down on attempt 2.
      const after = await journalJson<{ attempts: Array<{ number: number; killed?: { noticedAt: string; noticedBy: number } }> }>(repo.root, `runs/${id}/run.json`);
      assert.equal(after.attempts.find((a) => a.number === 2)?.killed?.noticedBy, 3, JSON.stringify(after.attempts));
      await assertFsckClean(repo.root);
    });
  });

  describe('what the model is sent after a crash', { concurrency: true }, () => {
    test('a crash between two tool calls of one answer still sends a tool_result for each tool_use', async () => {
      const repo = await repoWith();
      const hold = holdFile(repo);
      const turns: ScriptTurn[] = [
        {
          text: 'Two things at once.',
          tools: [
            { name: 'read_file', input: { path: 'README.md' } },
            { name: 'run_bash', input: { command: `echo y >> marks.txt; while [ -e '${hold}' ]; do sleep 0.05; done` } },
            { name: 'list_files', input: {} },
          ],
        },
        { text: 'Both done.' },
      ];
      const fake = await fakeWith(turns);
      const first = startCli(['run', '--yes', 'two at once'], { cwd: repo.root, env: fakeEnv(fake) });
      await waitUntil(() => existsSync(join(repo.root, 'marks.txt')), 'the command to start', { child: first });
      first.kill();
      await first.result;
      rmSync(hold);

      const second = await runCli(['run', '--yes', 'two at once'], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(second.code, 0, second.stderr);
      assertStepModes(second.stdout, 2);
      assert.equal(fake.requests.length, 2);
      const results = lastToolResults(fake.requests[1]!);
      assert.deepEqual(
        results.map((r) => [r.tool_use_id, r.is_error === true]),
        [
          ['toolu_s0_0', false],
          ['toolu_s0_1', true],
          ['toolu_s0_2', false],
        ],
      );
      assert.match(resultText(results[0]!), /# notes/);
      assertToolPairing(fake.requests);
      await assertFsckClean(repo.root);
    });
  });

  describe('a second process on a live run', { concurrency: true }, () => {
    test('is refused while the first runs, naming its pid, and takes the run over once the first is killed', async () => {
      const task = 'look around';
      const hold = new Set([1]);
      const fake = await fakeWith(
        [{ tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Looked.', tools: [{ name: 'list_files', input: {} }] }, { text: 'Seen it all.' }],
        hold,
      );
      const repo = await repoWith();
      const first = startCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      await waitUntil(() => fake.requests.length >= 2, 'the second model call', { child: first });

      const rival = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(rival.code, 1);
      assert.match(rival.stderr, /already running/);
      assert.match(rival.stderr, new RegExp(`pid ${first.pid}\\b`));
      assertNoStack(rival.stderr);
      assert.equal(fake.requests.length, 2, 'the refused process asked the model nothing');

      first.kill();
      await first.result;
      hold.clear();
      const third = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(third.code, 0, third.stderr);
      assertStepModes(third.stdout, 2);
      assert.match(third.stdout, /Seen it all\./);
      assert.deepEqual(fake.requests.slice(2).map(assistantMessages), [1, 2]);
      assertToolPairing(fake.requests);
      await assertFsckClean(repo.root);
    });
  });
});
