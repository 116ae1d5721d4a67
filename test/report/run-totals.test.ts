// The totals run.json carries (RunRecord.totals) must give `savepoint runs` exactly what reading
// every entry gives: for a finished run, a run stopped with a step in flight, a resumed one, a run
// written before totals existed, and a run whose totals no longer match its entries (they are then
// ignored). The judge is the entry-reading path (loadAllRuns) on the same journal.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openJournal } from '../../src/durable/run-journal.js';
import { listRunSummaries, loadAllRuns, openJournals } from '../../src/report/journal-runs.js';
import { journalFile, rewriteJournalFiles } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { runCli } from '../helpers/cli.js';

const scratch = useScratch();

async function writeRun(dir: string, run: string, options: { finish?: boolean; inFlight?: boolean } = {}): Promise<void> {
  const journal = await openJournal({ dir, run, task: `task ${run}`, model: 'claude-sonnet-4-5' });
  try {
    const usage = () => ({ inputTokens: 1000, outputTokens: 50, cacheReadInputTokens: 700, cacheCreationInputTokens: 30 });
    await journal.step('model', { turn: 1 }, () => ({ text: 'go' }), { usage });
    await journal.step('run_bash', { command: 'true' }, () => ({ exitCode: 0 }), { intent: true });
    if (options.inFlight) {
      // The intent is recorded, then the process "dies" before the result.
      await journal.step('run_bash', { command: 'sleep 1' }, () => Promise.reject(new Error('killed')), { intent: true }).catch(() => {});
      return;
    }
    await journal.step('model', { turn: 2 }, () => ({ text: 'done' }), { usage });
    if (options.finish !== false) await journal.finish('finished', { final: 'done' });
  } finally {
    journal.close();
  }
}

describe('run totals in run.json', () => {
  test('runs lists the same summaries from totals as from every entry', async () => {
    const repo = await scratch.repo();
    await writeRun(repo.root, 'finished');
    await writeRun(repo.root, 'stopped', { finish: false });
    await writeRun(repo.root, 'in-flight', { inFlight: true });
    // Resumed: a second process goes on (one more step), then finishes.
    await writeRun(repo.root, 'resumed', { finish: false });
    {
      const journal = await openJournal({ dir: repo.root, run: 'resumed' });
      await journal.step('model', { turn: 1 }, () => ({ text: 'go' }));
      await journal.step('run_bash', { command: 'true' }, () => ({ exitCode: 0 }), { intent: true });
      await journal.step('model', { turn: 2 }, () => ({ text: 'done' }));
      await journal.step('model', { turn: 3 }, () => ({ text: 'more' }), { usage: () => ({ inputTokens: 5, outputTokens: 5 }) });
      await journal.finish('finished', { final: 'more' });
      journal.close();
    }
    // Written before totals existed: run.json without them.
    await writeRun(repo.root, 'old');
    const old = JSON.parse(await journalFile(repo.root, 'runs/old/run.json')) as Record<string, unknown>;
    assert.ok(old.totals, 'a finished run records its totals');
    delete old.totals;
    await rewriteJournalFiles(repo.root, { 'runs/old/run.json': `${JSON.stringify(old, null, 2)}\n` });
    // Totals that no longer match: an entry added behind run.json's back.
    await writeRun(repo.root, 'stale');
    const extra = JSON.parse(await journalFile(repo.root, 'runs/stale/steps/000/000003-model.json')) as Record<string, unknown>;
    await rewriteJournalFiles(repo.root, {
      'runs/stale/steps/000/000004-model.json': `${JSON.stringify({ ...extra, step: 4, key: 'model:extra', usage: { inputTokens: 9, outputTokens: 9 } }, null, 2)}\n`,
    });

    const journals = await openJournals(repo.root);
    const fast = await listRunSummaries(journals);
    const slow = await loadAllRuns(journals);
    assert.deepEqual(
      fast.map((row) => ({ ...row.summary, problem: row.problem })),
      slow.map((run) => ({ ...run.timeline.run, problem: run.problem })),
    );
    const byId = new Map(fast.map((row) => [row.id, row.summary]));
    assert.equal(byId.get('finished')!.status, 'finished');
    assert.deepEqual(byId.get('finished')!.tokens, { input: 2000, output: 100, cacheCreation: 60, cacheRead: 1400 });
    assert.equal(byId.get('in-flight')!.status, 'in-flight');
    assert.equal(byId.get('stopped')!.status, 'interrupted');
    assert.equal(byId.get('resumed')!.steps, 4);
    assert.equal(byId.get('resumed')!.resumes, 1);
    assert.equal(byId.get('stale')!.steps, 4, 'stale totals are not used');

    // And through the CLI.
    const cli = await runCli(['runs', '--json'], { cwd: repo.root, env: {} });
    assert.equal(cli.code, 0, cli.stderr);
    const listed = (JSON.parse(cli.stdout) as { runs: Array<{ id: string; steps: number }> }).runs;
    assert.deepEqual(
      listed.map((r) => r.id),
      slow.map((r) => r.id),
    );
  });
});
