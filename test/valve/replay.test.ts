// Replay's refusals and decisions: a run that asks for a different step than the one recorded
// stops with a divergence; a step killed mid-way (intent, no result) is handed to onInFlight; a
// damaged entry stops the run before anything replays. The divergence is on the in-memory store; the
// kill is a real kill -9 of a child appending to a real repository, and the damaged entry a hand
// edit of a real branch with git (the store itself refuses to write over a recorded step).
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import {
  CorruptEntryError,
  DivergenceError,
  InFlightError,
  openJournal,
  type InFlightStep,
  type StepEvent,
} from '../../src/index.js';
import type { JournalStorage } from '../../src/journal/journal-storage.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { assertFsckClean, gitOut, journalFile, rewriteJournalFiles } from '../helpers/git.js';
import { startAppender } from '../helpers/journal-child.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();
const newRepo = (): Promise<TempRepo> => scratch.repo();

// Three recorded steps of run `r`: a read, a command, a write (on either store).
async function recordThree(store: JournalStorage, run = 'r'): Promise<void> {
  const journal = await openRunJournal(store, { run, task: 'three steps' });
  await journal.step('read_file', { path: 'a.txt' }, () => 'a', { describe: 'read_file a.txt' });
  await journal.step('run_bash', { command: 'npm test' }, () => ({ exit: 0 }), { intent: true, describe: 'run_bash "npm test"' });
  await journal.step('write_file', { path: 'b.txt', content: 'b' }, () => 'created', { describe: 'write_file b.txt' });
  journal.close();
}

describe('divergence', () => {
  it('a different input at step 2 stops the run with DivergenceError naming the position, both calls and fork', async () => {
    const store = new MemoryJournalStore();
    await recordThree(store);
    const journal = await openRunJournal(store, { run: 'r' });
    let ran = false;
    assert.equal(await journal.step('read_file', { path: 'a.txt' }, () => 'live', { describe: 'read_file a.txt' }), 'a');
    await assert.rejects(
      journal.step('run_bash', { command: 'npm run lint' }, () => ((ran = true), { exit: 0 }), { intent: true, describe: 'run_bash "npm run lint"' }),
      (error: unknown) => {
        assert.ok(error instanceof DivergenceError);
        assert.equal(error.code, 'EDIVERGED');
        assert.equal(error.data.position, 2);
        assert.match(error.message, /at step 2/);
        assert.match(error.message, /recorded run_bash "npm test"/);
        assert.match(error.message, /asked for run_bash "npm run lint"/);
        assert.match(error.message, /its input field "command" is "npm run lint", not the recorded "npm test"/);
        assert.match(error.message, /savepoint fork r --at 2/);
        return true;
      },
    );
    assert.equal(ran, false, 'the diverging step did not run');
    // A different kind at the same position diverges too.
    await assert.rejects(journal.step('model', { turn: 2 }, () => 'x'), { code: 'EDIVERGED' });
    journal.close();
    assert.equal((await readRunEntries(store, 'r')).length, 4, 'nothing was written');
  });
});

describe('a step killed mid-way (intent recorded, no result)', () => {
  // One real kill -9 inside step 3 (an intent step); each test gets its own copy of that repository.
  let killedRepo: string;
  before(async () => {
    const repo = await newRepo();
    const child = startAppender({ dir: repo.root, run: 'crashed', steps: 4, hangAt: 3 });
    child.onLine((line) => line === 'running 3' && child.kill());
    const report = await child.result;
    assert.equal(report.signal, 'SIGKILL');
    assert.deepEqual(report.done, [1, 2]);
    killedRepo = repo.root;
  });

  function copyOfKilledRepo(): string {
    const dir = scratch.dir('savepoint-inflight-');
    cpSync(killedRepo, dir, { recursive: true });
    return dir;
  }

  // The appender's loop, in this process.
  async function resume(dir: string, onInFlight?: (step: InFlightStep) => unknown) {
    const events: StepEvent[] = [];
    const calls: number[] = [];
    const journal = await openJournal({ dir, run: 'crashed', onEvent: (e) => events.push(e) });
    const values: unknown[] = [];
    for (let i = 1; i <= 4; i++) {
      const kind = i % 3 === 0 ? 'command' : 'work';
      values.push(
        await journal.step(kind, { i, text: `step ${i} of crashed` }, () => (calls.push(i), { i, square: i * i }), {
          intent: i % 3 === 0,
          describe: `${kind} ${i}`,
          ...(onInFlight ? { onInFlight: onInFlight as never } : {}),
        }),
      );
    }
    journal.close();
    return { events, calls, values };
  }

  it('without an onInFlight answer the step is not run again: step() throws EINFLIGHT and writes nothing', async () => {
    const dir = copyOfKilledRepo();
    const before = await gitOut(dir, ['rev-parse', 'agent-journal']);
    await assert.rejects(resume(dir), (error: unknown) => {
      assert.ok(error instanceof InFlightError);
      assert.equal(error.code, 'EINFLIGHT');
      assert.deepEqual({ run: error.data.run, position: error.data.position, library: error.data.library }, { run: 'crashed', position: 3, library: true });
      assert.match(error.message, /onInFlight/);
      return true;
    });
    assert.equal(await gitOut(dir, ['rev-parse', 'agent-journal']), before, 'nothing was appended');
    await assertFsckClean(dir);
  });

  it('onInFlight is told the step, and {rerun: true} runs it again', async () => {
    const dir = copyOfKilledRepo();
    const seen: InFlightStep[] = [];
    const { calls, values } = await resume(dir, (step) => (seen.push(step), { rerun: true }));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.run, 'crashed');
    assert.equal(seen[0]!.position, 3);
    assert.equal(seen[0]!.kind, 'command');
    assert.equal(seen[0]!.description, 'command 3');
    assert.deepEqual(seen[0]!.input, { i: 3, text: 'step 3 of crashed' });
    assert.ok(!Number.isNaN(Date.parse(seen[0]!.startedAt)));
    assert.deepEqual(calls, [3, 4]);
    assert.deepEqual(values[2], { i: 3, square: 9 });
  });

  it('{result, resolution} records that result without running the step, and it replays from then on', async () => {
    const dir = copyOfKilledRepo();
    const answer = { result: { i: 3, square: 9, note: 'outcome unknown' }, summary: 'outcome unknown', resolution: 'in-flight-reported' };
    const { events, calls, values } = await resume(dir, () => answer);
    assert.deepEqual(calls, [4], 'step 3 was not run');
    assert.deepEqual(values[2], answer.result);
    assert.ok(events.some((e) => e.type === 'in-flight' && e.position === 3 && e.decision === 'answered'));
    const recorded = events.find((e) => e.type === 'recorded' && e.position === 3);
    assert.equal(recorded?.type === 'recorded' && recorded.resolution, 'in-flight-reported');
    const entry = JSON.parse(await journalFile(dir, 'runs/crashed/steps/000/000003-command.json'));
    assert.equal(entry.resolution, 'in-flight-reported');
    assert.deepEqual(entry.result, answer.result);
    // From now on it is an ordinary recorded step: replayed, nothing asked, nothing run.
    const again = await resume(dir, () => assert.fail('onInFlight asked again'));
    assert.deepEqual(again.calls, []);
    assert.deepEqual(again.values[2], answer.result);
  });
});

describe('a corrupt entry', () => {
  const cases: Array<{ name: string; edit: (text: string) => string; reason: RegExp }> = [
    { name: 'invalid JSON', edit: (text) => text.slice(0, -10), reason: /not valid JSON/ },
    { name: 'a wrong step number', edit: (text) => text.replace('"step": 2,', '"step": 3,'), reason: /says step 3 but its file name says 2/ },
  ];
  for (const { name, edit, reason } of cases) {
    it(`(${name}) stops openJournal with CorruptEntryError naming the file and step, and nothing replays`, async () => {
      const repo = await newRepo();
      await recordThree(await JournalStore.open(repo.root));
      const path = 'runs/r/steps/000/000002-run_bash.json';
      await rewriteJournalFiles(repo.root, { [path]: `${edit(await journalFile(repo.root, path))}\n` }, `hand edit: ${name}`);
      await assertFsckClean(repo.root); // valid git, invalid journal
      const events: StepEvent[] = [];
      for (let attempt = 0; attempt < 2; attempt++) {
        // Twice: a refused open releases the run lock, so the next attempt gets the same answer.
        await assert.rejects(openJournal({ dir: repo.root, run: 'r', onEvent: (e) => events.push(e) }), (error: unknown) => {
          assert.ok(error instanceof CorruptEntryError, String(error));
          assert.equal(error.code, 'ECORRUPTENTRY');
          assert.equal(error.data.path, path);
          assert.equal(error.data.step, 2);
          assert.match(error.message, new RegExp(`${path.replace(/\./g, '\\.')} \\(step 2\\) is corrupt`));
          assert.match(error.message, reason);
          return true;
        });
      }
      assert.deepEqual(events, [], 'nothing replayed');
      // Other runs on the same branch are unaffected.
      await recordThree(await JournalStore.open(repo.root), 'other');
    });
  }
});
