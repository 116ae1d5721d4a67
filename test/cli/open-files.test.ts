// A low limit of open files (`ulimit -n`), through the real CLI started by a real shell with that
// limit: savepoint either does its work or says in one paragraph what ran out and what to do,
// never "unexpected error: spawnSync git EMFILE" and never a stack trace; the journal stays whole.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertFsckClean } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, baseEnv, BIN } from '../helpers/cli.js';

const scratch = useScratch();

describe('a low limit of open files', () => {
  test('with ulimit -n from 24 to 64, a run works or says the limit is too low and how to raise it', async () => {
    const repo = await scratch.repo({ 'README.md': '# files\n' });
    const script = join(scratch.dir('savepoint-script-'), 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command: 'echo hi > made.txt' } }] }, { text: 'Done.' }] }));
    const outcomes: string[] = [];
    for (const limit of [24, 28, 32, 36, 40, 48, 64]) {
      // The limit is set by the shell that starts node, as a person's `ulimit -n` would be. --norc:
      // a bash whose stdin is a socket (spawnSync's pipe) and that finds no SHLVL (a runner started
      // without one) reads ~/.bashrc, which is not the person's shell being tested here.
      const run = spawnSync('bash', ['--norc', '-c', `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, BIN, 'run', '--yes', '--no-sandbox', '--model', `script:${script}`, `task under ${limit} files`], {
        cwd: repo.root,
        env: baseEnv(),
        encoding: 'utf8',
      });
      const context = `ulimit -n ${limit}: exit ${run.status}\n${run.stdout}\n${run.stderr}`;
      assert.doesNotMatch(run.stderr, /unexpected error/, context);
      assertNoStack(run.stderr, context);
      if (run.status === 0) {
        assert.match(run.stdout, /Done\./, context);
        outcomes.push(`${limit}: worked`);
        continue;
      }
      assert.equal(run.status, 1, context);
      assert.equal(run.stderr.trim().split('\n').length, 1, `one paragraph: ${context}`);
      assert.match(run.stderr, /(Too many|ran out of) open files/, context);
      assert.match(run.stderr, /ulimit -n 1024/, context);
      // Once loaded, it names the limit it had.
      if (run.stderr.startsWith('savepoint: Too many')) assert.match(run.stderr, new RegExp(`ulimit -n is ${limit}\\b`), context);
      outcomes.push(`${limit}: said so`);
    }
    assert.match(outcomes.at(-1)!, /64: worked/, `a limit of 64 is enough: ${outcomes.join(', ')}`);
    await assertFsckClean(repo.root, outcomes.join(', '));
  });
});
