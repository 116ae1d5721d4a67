// `savepoint demo`, the seed chapter's lecture demo, run for real: a scripted agent killed at lap 4,
// the identical command run again, laps 1–3 (steps 1–6) replayed and lap 4 (step 7) live.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertFsckClean, assertStepModes, runCli, type CliResult } from '../helpers/cli.js';
import { tmpdir } from 'node:os';

// The demo's two runs, split at the second `$ savepoint run` it prints.
function runs(stdout: string): [string, string] {
  const parts = stdout.split(/^\$ savepoint run .*$/m);
  assert.equal(parts.length, 3, `the demo shows two runs:\n${stdout}`);
  return [parts[1]!, parts[2]!];
}

function repositoryOf(result: CliResult): string {
  const match = /A small repository with a failing test: (\S+)/.exec(result.stdout);
  assert.ok(match, result.stdout);
  return match[1]!;
}

describe('savepoint demo', { concurrency: true }, () => {
  test('kills the run at lap 4, then replays steps 1-6 from the journal and goes live at step 7, with no API key', async () => {
    const demo = await runCli(['demo'], { cwd: tmpdir(), timeoutMs: 30_000 });
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.ok(demo.ms < 30_000, `the demo took ${demo.ms} ms`);
    const [killed, resumed] = runs(demo.stdout);
    const before = assertStepModes(killed, 0, 'the first run');
    assert.equal(before.length, 6, 'the first run died after laps 1-3');
    assert.match(demo.stdout, /kill -9 \d+/);
    const after = assertStepModes(resumed, 6, 'the resumed run');
    assert.ok(after.length >= 7);
    assert.match(resumed, /Final answer/);
    assert.match(resumed, /Replayed 6 steps from the journal/);
    assert.match(demo.stdout, /git log --oneline agent-journal/);
    assert.equal(existsSync(dirname(repositoryOf(demo))), false, 'the temporary repository is removed without --keep');
  });

  test('with --keep leaves a repository whose bug is fixed and whose journal is sound', async () => {
    const demo = await runCli(['demo', '--keep'], { cwd: tmpdir(), timeoutMs: 30_000 });
    const repo = repositoryOf(demo);
    try {
      assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
      assert.match(readFileSync(join(repo, 'cart.js'), 'utf8'), /let i = 0;/);
      await assertFsckClean(repo);
    } finally {
      rmSync(dirname(repo), { recursive: true, force: true });
    }
  });
});
