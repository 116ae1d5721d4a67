// The named ways into a run (src/session/start.ts), in this process on a real repository with the
// scripted model: startRun finds the task's run (the identical call replays it, asking nothing;
// --fresh starts the next one; another task at a run's id is refused), resumeRun finds a run by id
// or prefix and names what it cannot find, continueRun adds a follow-up to this tree's latest run,
// forkRun numbers its default ids on, latestRunHere says which run is this tree's latest; empty
// words are refused before anything is written. Fetched and fenced runs: test/cli/finding-runs.test.ts,
// test/cli/machines.test.ts; a held session: test/session/hold.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NoRunsError, NoUnfinishedRunError, UnknownRunError, UsageError } from '../../src/errors/index.js';
import { createScriptedProvider } from '../../src/model/scripted.js';
import type { ModelProvider } from '../../src/model/types.js';
import { continueRun, forkRun, latestRunHere, resumeRun, startRun } from '../../src/session/start.js';
import type { SessionOptions } from '../../src/session/types.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const TURNS = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'It is a readme.' },
  { text: 'Noted the follow-up.' },
];

let repo: TempRepo;
let empty: TempRepo;
// How many times the model was asked, across every call of the test.
let asked = 0;
const provider: ModelProvider = (() => {
  const scripted = createScriptedProvider({ turns: TURNS });
  return { ...scripted, complete: (request, options) => (asked++, scripted.complete(request, options)) };
})();
const options = (dir: string): SessionOptions => ({ dir, provider, sandbox: { use: false }, approve: async () => true });
const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message);

before(async () => {
  repo = await createTempRepo({ files: { 'README.md': '# app\n' }, commit: true });
  empty = await createTempRepo({ files: { 'README.md': '# empty\n' }, commit: true });
});
after(async () => {
  await repo.remove();
  await empty.remove();
});

describe('the ways into a run', () => {
  it('in a repository with no runs: nothing to resume, continue or call latest; empty words are refused', async () => {
    assert.equal(await latestRunHere(empty.root), undefined);
    await assert.rejects(resumeRun(options(empty.root)), NoUnfinishedRunError);
    await assert.rejects(resumeRun({ ...options(empty.root), run: 'nosuch' }), UnknownRunError);
    await assert.rejects(continueRun({ ...options(empty.root), message: 'and then?' }), NoRunsError);
    await assert.rejects(startRun({ ...options(empty.root), task: '  ' }), usage(/Say what the agent should do/));
    await assert.rejects(continueRun({ ...options(empty.root), message: ' ' }), usage(/Say what the agent should do next/));
    await assert.rejects(forkRun({ dir: empty.root, from: 'x', at: 0 }), usage(/--at needs a step number/));
    assert.equal(await empty.git('branch', '--list', 'agent-journal'), '', 'nothing was written');
    assert.equal(asked, 0);
  });

  it('startRun runs a task to its answer; the identical call replays it asking nothing; another task at its id is refused', async () => {
    const first = await startRun({ ...options(repo.root), task: 'read the readme' });
    assert.equal(first.status, 'finished');
    assert.equal(first.final, 'It is a readme.');
    assert.deepEqual([first.replayed, first.live], [0, 3]);
    assert.equal(asked, 2);

    const again = await startRun({ ...options(repo.root), task: 'read the readme' });
    assert.equal(again.run, first.run, 'the same task finds its run');
    assert.deepEqual([again.replayed, again.live, again.final], [3, 0, 'It is a readme.']);
    assert.equal(asked, 2, 'a finished run replays with no model call');
    assert.equal(await latestRunHere(repo.root), first.run);

    await assert.rejects(startRun({ ...options(repo.root), task: 'something else', run: first.run }), usage(/is for the task "read the readme", not "something else"/));
    await assert.rejects(startRun({ ...options(repo.root), task: 'read the readme', run: first.run, fresh: true }), usage(/already exists, so --fresh cannot start it anew/));
    const fresh = await startRun({ ...options(repo.root), task: 'read the readme', fresh: true });
    assert.notEqual(fresh.run, first.run, '--fresh: the next run of the task');
    assert.deepEqual([fresh.replayed, fresh.live], [0, 3]);
    assert.equal(await latestRunHere(repo.root), fresh.run);
  });

  it('resumeRun finds a run by a unique prefix of its id; continueRun adds a follow-up to the latest run, once', async () => {
    const latest = (await latestRunHere(repo.root))!;
    const resumed = await resumeRun({ ...options(repo.root), run: latest.slice(0, -1) });
    assert.equal(resumed.run, latest);
    assert.deepEqual([resumed.replayed, resumed.live], [3, 0]);
    await assert.rejects(resumeRun(options(repo.root)), NoUnfinishedRunError, 'every run here is finished');

    const before = asked;
    const followed = await continueRun({ ...options(repo.root), message: 'note it' });
    assert.equal(followed.run, latest);
    assert.equal(followed.final, 'Noted the follow-up.');
    assert.deepEqual([followed.replayed, followed.live], [3, 2], 'the follow-up and its answer are live');
    assert.equal(asked, before + 1);
    const again = await continueRun({ ...options(repo.root), message: 'note it', run: latest });
    assert.ok(again.live > 0, 'answered, the same words are a new follow-up');
  });

  it('forkRun numbers its default ids on', async () => {
    const from = (await latestRunHere(repo.root))!;
    const first = await forkRun({ dir: repo.root, from, at: 2 });
    const second = await forkRun({ dir: repo.root, from, at: 2 });
    assert.deepEqual([first.id, first.from, first.steps], [`${from}-fork-2`, from, 1]);
    assert.equal(second.id, `${from}-fork-2-2`);
    const resumed = await resumeRun({ ...options(repo.root), run: first.id });
    assert.deepEqual([resumed.replayed, resumed.final], [1, 'It is a readme.'], 'the fork replays step 1 and goes live at 2');
  });
});
