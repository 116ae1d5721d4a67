// A run recorded by savepoint 0.1.0, before run.json pinned a run's configuration, replays with this
// build: the past is read-only, so its requests must be rebuilt with the words 0.1.0 sent (its
// run_bash description, its note in a cut output), not this build's. The fixture is a git bundle of
// a repository whose journal 0.1.0 wrote: a scripted model ran `seq 1 5000` (an output long enough
// to be cut for the model) and answered. `savepoint runs` lists it from its entries: 0.1.0 wrote no
// totals into run.json.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, assertFsckClean, gitOut, journalJson } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const BUNDLE = join(ROOT, 'fixtures/journals/savepoint-0.1.0.bundle');
const TASK = 'count to five thousand';

describe('a run recorded by savepoint 0.1.0', () => {
  const scratch = useScratch();

  function clone(): string {
    const dir = join(scratch.dir('savepoint-legacy-'), 'repo');
    execFileSync('git', ['clone', '-q', BUNDLE, dir]);
    return dir;
  }

  it('replays with this build, without divergence and without a model call', async () => {
    const repo = clone();
    const before = await gitOut(repo, ['rev-parse', 'origin/agent-journal']);
    // No key, no model script: a finished run replays from the journal alone.
    const result = await runCli(['run', TASK], { cwd: repo, env: { ANTHROPIC_API_KEY: '' } });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /diverged/);
    assert.match(result.stdout, /#3\s+REPLAYED \(from journal\)\s+model turn 2/);
    assert.match(result.stdout, /Counted to 5000\./);
    assert.equal(await gitOut(repo, ['rev-parse', 'agent-journal']), before, 'replaying a finished run writes nothing');
    await assertFsckClean(repo);
  });

  it('is listed by savepoint runs from its entries (its run.json has no totals), here and from the remote', async () => {
    const repo = clone();
    const id = 'count-to-five-thousand-9643e5';
    const run = JSON.parse(await gitOut(repo, ['show', `origin/agent-journal:runs/${id}/run.json`])) as { totals?: unknown };
    assert.equal(run.totals, undefined, '0.1.0 wrote no totals');
    const expected = { id, status: 'finished', steps: 3, modelCalls: 2, tokens: { input: 5925, output: 20, cacheCreation: 0, cacheRead: 0 }, lastActivity: '2026-12-01T10:17:40.046Z', problem: null };
    const list = async (args: string[]) => {
      const result = await runCli(['runs', '--json', ...args], { cwd: repo });
      assert.equal(result.code, 0, result.stderr);
      return (JSON.parse(result.stdout) as { runs: Array<Record<string, unknown>> }).runs.map((r) => ({ ...Object.fromEntries(Object.keys(expected).map((k) => [k, r[k]])), sources: r.sources }));
    };
    assert.deepEqual(await list(['--all']), [{ ...expected, sources: ['origin'] }]);
    execFileSync('git', ['branch', '-q', 'agent-journal', 'origin/agent-journal'], { cwd: repo });
    assert.deepEqual(await list([]), [{ ...expected, sources: ['local', 'origin'] }]);
  });

  it('goes on with a follow-up, and pins what 0.1.0 sent into run.json', async () => {
    const repo = clone();
    execFileSync('git', ['branch', '-q', 'agent-journal', 'origin/agent-journal'], { cwd: repo });
    const fake = await scratch.fake([{ text: 'unused' }, { text: 'unused' }, { text: 'Still 5000.' }]);
    const result = await runCli(['continue', '--yes', 'check the count again'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url } });
    // The recorded model name is a script that is no longer there: the follow-up's live call says so,
    // after every recorded step replayed without divergence.
    assert.doesNotMatch(result.stderr, /diverged/);
    assert.match(result.stdout, /#3\s+REPLAYED \(from journal\)\s+model turn 2/);
    const run = await journalJson<{ config?: { outputNote?: string; tools: Array<{ name: string; description: string }> } }>(repo, 'runs/count-to-five-thousand-9643e5/run.json');
    assert.equal(run.config?.outputNote, 'journal');
    assert.match(run.config!.tools.find((t) => t.name === 'run_bash')!.description, /Runs with the user's environment/);
  });
});
