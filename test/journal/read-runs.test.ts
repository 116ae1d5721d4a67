// Runs read back by a library user, by the repository's directory: the ids on the branch, sorted, and
// one run's run.json and entries in order (intents and results); nothing for a run the journal does
// not hold, or a repository with no journal yet.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { listRuns, openJournal, readRun } from '../../src/index.js';
import { useScratch } from '../helpers/scratch.js';

describe('listRuns and readRun', () => {
  const scratch = useScratch();

  it('list the runs of the repository around a directory and read one back whole', async () => {
    const repo = await scratch.repo();
    assert.deepEqual(await listRuns(repo.root), []);
    for (const run of ['nightly', 'audit']) {
      const journal = await openJournal({ dir: repo.root, run, task: `the ${run} task` });
      await journal.step('fetch', { n: 1 }, () => ({ rows: 3 }));
      await journal.step('send', { to: 'me' }, () => 'sent', { intent: true });
      await journal.finish('finished', { final: `${run} done` });
      journal.close();
    }
    mkdirSync(join(repo.root, 'sub'));
    assert.deepEqual(await listRuns(join(repo.root, 'sub')), ['audit', 'nightly']);

    const nightly = await readRun(repo.root, 'nightly');
    assert.ok(nightly);
    assert.equal(nightly.record.id, 'nightly');
    assert.equal(nightly.record.task, 'the nightly task');
    assert.equal(nightly.record.status, 'finished');
    assert.equal(nightly.record.final, 'nightly done');
    assert.deepEqual(nightly.entries.map((entry) => [entry.step, entry.kind, entry.phase]), [[1, 'fetch', 'result'], [2, 'send', 'intent'], [2, 'send', 'result']]);
    assert.deepEqual(nightly.entries[0]!.result, { rows: 3 });
    assert.equal(await readRun(repo.root, 'no-such-run'), undefined);
  });
});
