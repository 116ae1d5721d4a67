// Ctrl-C is not a crash: the process stops itself, cleanly, but the rule is the same. The step in
// progress is left as an intent with no result, exit code 130, and the identical command handles
// it as in flight (reported to the model, not run again) while every finished step replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertFsckClean, assertNoStack, journalPaths, runCli, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

test('Ctrl-C during a command stops with exit 130, and the identical command reports that step in flight instead of re-running it', async () => {
  const repo = await scratch.repo({ 'README.md': '# app\n' });
  const script = join(repo.root, '.git', 'script.json'); // inside .git: not part of the working tree
  writeFileSync(
    script,
    JSON.stringify({
      turns: [
        { text: 'Counting.', tools: [{ name: 'run_bash', input: { command: 'echo started >> count.txt; sleep 10; echo finished >> count.txt' } }] },
        { text: 'Done counting.' },
      ],
    }),
  );
  const args = ['run', '--yes', '--model', `script:${script}`, 'count once'];
  const first = startCli(args, { cwd: repo.root });
  await waitUntil(() => existsSync(join(repo.root, 'count.txt')), 'the command to start', { child: first });
  first.child.kill('SIGINT');
  const stopped = await first.result;
  assert.equal(stopped.code, 130, stopped.stdout + stopped.stderr);
  assert.match(stopped.stdout, /Stopping: the step in progress is left unrecorded/);
  assertNoStack(stopped.stdout + stopped.stderr);
  const paths = await journalPaths(repo.root);
  assert.ok(paths.some((p) => p.endsWith('000002-run_bash.intent.json')), 'the interrupted step keeps its intent');
  assert.ok(!paths.some((p) => p.endsWith('000002-run_bash.json')), 'and has no result');

  const again = await runCli(args, { cwd: repo.root });
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /#1\s+REPLAYED \(from journal\)/);
  // Not a crash, and not run: the step is answered, not labelled LIVE.
  assert.match(again.stdout, /The previous attempt was interrupted \(Ctrl-C\), not crashed/);
  assert.match(again.stdout, /#2 run_bash .* was interrupted \(Ctrl-C\) before its result was recorded/);
  assert.match(again.stdout, /#2\s+NOT RUN \(was in flight\)\s+run_bash .*outcome unknown: interrupted \(Ctrl-C\)/);
  assert.doesNotMatch(again.stdout, /(before|at) (a|the) crash/);
  assert.deepEqual(readFileSync(join(repo.root, 'count.txt'), 'utf8').split('\n').filter(Boolean), ['started'], 'the command was not run again');
  await assertFsckClean(repo.root);
});
