// The valve on the in-memory journal store (src/journal/memory-store.ts), in this process: no git,
// no disk, no child process. The same `step` as on git: a live step runs once and is recorded; the
// run opened again replays it without calling anything and writes nothing; a resume replays what
// was recorded and runs the rest live; a step that throws, or whose append fails, leaves its
// position to the retry; a different step at a recorded position is a divergence; an entry too big
// to keep is read again from the store when replay reaches it; one process at a time holds a run.
// The git store's durability (fsync, kill -9, power cuts) is tested on git: test/journal, test/valve/crash-*.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DivergenceError, InFlightError, type InFlightStep, type OpenJournalOptions, type StepEvent } from '../../src/index.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import type { FaultPoint } from '../../src/journal/store-options.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import type { RunJournal } from '../../src/valve/run-journal.js';

// Leaves `run` as a process killed inside an intent step leaves it: the step's function is
// entered (so its intent is recorded) and never returns; the lock goes, as a dead process's does.
async function dieInside(store: MemoryJournalStore, run: string, before: (journal: RunJournal<MemoryJournalStore>) => Promise<unknown>): Promise<void> {
  const journal = await open(store, run);
  await before(journal);
  await new Promise<void>((entered) => void journal.step('deploy', { to: 'prod' }, () => (entered(), new Promise<string>(() => {})), { intent: true, describe: 'deploy prod' }));
  journal.close();
}

function open(store: MemoryJournalStore, run: string, extra: Partial<OpenJournalOptions> = {}) {
  return openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', ...extra });
}

describe('the valve on the in-memory store', () => {
  it('runs each step once live, records it, and replays the finished run with zero calls and nothing written', async () => {
    const store = new MemoryJournalStore({ local: { headCommit: 'a'.repeat(40) } });
    const events: StepEvent[] = [];
    const calls: string[] = [];
    const first = await open(store, 'live', { onEvent: (e) => events.push(e) });
    const read = await first.step('read_file', { path: 'a.txt' }, () => (calls.push('read'), 'hello'), { describe: 'read_file a.txt' });
    const bash = await first.step('run_bash', { command: 'pytest' }, () => (calls.push('bash'), { exit: 1 }), { intent: true, describe: 'run_bash "pytest"', summarize: (r) => `exit ${r.exit}` });
    await first.finish('finished', { final: 'done' });
    first.close();
    assert.equal(read, 'hello');
    assert.deepEqual(bash, { exit: 1 });
    assert.deepEqual(calls, ['read', 'bash']);
    assert.deepEqual(events.map((e) => `${e.type} ${e.position}`), ['started 1', 'recorded 1', 'started 2', 'recorded 2']);

    const entries = await readRunEntries(store, 'live');
    assert.deepEqual(entries.map((e) => `${e.step} ${e.kind} ${e.phase}`), ['1 read_file result', '2 run_bash intent', '2 run_bash result']);
    const record = (await readRunRecord(store, 'live'))!;
    assert.equal(record.status, 'finished');
    assert.equal(record.final, 'done');
    assert.equal(record.baseCommit, 'a'.repeat(40));
    const subjects = (await store.log()).map((c) => c.message.split('\n')[0]).reverse();
    assert.match(subjects[0]!, /^live #1 read_file a\.txt/);
    assert.match(subjects.at(-1)!, /^live finished: done/);

    const tip = store.tip;
    const again = await open(store, 'live');
    const replayed = [
      await again.step('read_file', { path: 'a.txt' }, () => assert.fail('a replayed step ran'), { describe: 'read_file a.txt' }),
      await again.step('run_bash', { command: 'pytest' }, () => assert.fail('a replayed step ran'), { intent: true }),
    ];
    await again.finish('finished', { final: 'done' });
    again.close();
    assert.deepEqual(replayed, ['hello', { exit: 1 }]);
    assert.deepEqual(again.stats, { replayed: 2, live: 0 });
    assert.equal(store.tip, tip, 'replaying a finished run writes nothing');
  });

  it('resumes an unfinished run: the recorded steps replay, the rest run live as a new attempt', async () => {
    const store = new MemoryJournalStore();
    const calls: number[] = [];
    const first = await open(store, 'resume');
    for (let i = 1; i <= 3; i++) await first.step('work', { i }, () => (calls.push(i), i * 10));
    first.close();
    const second = await open(store, 'resume');
    const values: number[] = [];
    for (let i = 1; i <= 5; i++) values.push(await second.step('work', { i }, () => (calls.push(i), i * 10)));
    await second.finish('finished', { final: 'five' });
    second.close();
    assert.deepEqual(calls, [1, 2, 3, 4, 5]);
    assert.deepEqual(values, [10, 20, 30, 40, 50]);
    const record = (await readRunRecord(store, 'resume'))!;
    assert.deepEqual(record.attempts.map((a) => [a.number, a.firstLiveStep]), [[1, 1], [2, 4]]);
    assert.deepEqual((await readRunEntries(store, 'resume')).map((e) => e.attempt), [1, 1, 1, 2, 2]);
  });

  it('gives the position of a step that threw, or whose append failed, to the retry; the run stays readable', async () => {
    let failNext: FaultPoint | undefined;
    const store = new MemoryJournalStore({
      faultPoint: (point) => {
        if (point !== failNext) return;
        failNext = undefined;
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      },
    });
    const journal = await open(store, 'faults');
    await journal.step('work', { n: 1 }, () => 1);
    await assert.rejects(journal.step('work', { n: 2 }, () => Promise.reject(new Error('boom'))), /boom/);
    failNext = 'before-objects';
    await assert.rejects(journal.step('work', { n: 2 }, () => 2), /no space left/);
    assert.equal(await journal.step('work', { n: 2 }, () => 2), 2);
    journal.close();
    assert.deepEqual((await readRunEntries(store, 'faults')).map((e) => e.step), [1, 2]);
  });

  it('tells a divergence: another step at a recorded position', async () => {
    const store = new MemoryJournalStore();
    const first = await open(store, 'diverge');
    await first.step('work', { n: 1 }, () => 1);
    first.close();
    const second = await open(store, 'diverge');
    await assert.rejects(second.step('work', { n: 2 }, () => 2), (error) => error instanceof DivergenceError && error.code === 'EDIVERGED');
    second.close();
  });

  it('finds a step whose intent is recorded and whose function never returned in flight: refused, answered, or rerun', async () => {
    const store = new MemoryJournalStore();
    await dieInside(store, 'crashed', (journal) => journal.step('work', { n: 1 }, () => 1));
    const tip = store.tip;
    // What the store holds: step 2's intent, no result.
    assert.deepEqual((await readRunEntries(store, 'crashed')).map((e) => `${e.step} ${e.kind} ${e.phase}`), ['1 work result', '2 deploy intent']);
    const deploy = (journal: RunJournal<MemoryJournalStore>, onInFlight: ((step: InFlightStep) => unknown) | undefined, run: () => string) =>
      journal.step('deploy', { to: 'prod' }, run, { intent: true, describe: 'deploy prod', ...(onInFlight ? { onInFlight: onInFlight as never } : {}) });

    // Without an onInFlight answer it is not run again, and nothing is written.
    const refused = await open(store, 'crashed');
    assert.equal(await refused.step('work', { n: 1 }, () => assert.fail('replayed')), 1);
    assert.equal(refused.history.inFlight, true);
    await assert.rejects(
      deploy(refused, undefined, () => assert.fail('an in-flight step ran')),
      (error: unknown) => error instanceof InFlightError && error.code === 'EINFLIGHT' && error.data.position === 2,
    );
    refused.close();
    assert.equal(store.tip, tip, 'a refused in-flight step writes nothing');

    // An answer is recorded in its place without running it, and replays from then on.
    const seen: InFlightStep[] = [];
    const events: StepEvent[] = [];
    const answered = await open(store, 'crashed', { onEvent: (e) => events.push(e) });
    await answered.step('work', { n: 1 }, () => assert.fail('replayed'));
    const answer = { result: 'outcome unknown', summary: 'outcome unknown', resolution: 'in-flight-reported' };
    assert.equal(await deploy(answered, (step) => (seen.push(step), answer), () => assert.fail('an answered step ran')), 'outcome unknown');
    answered.close();
    assert.deepEqual(seen.map((s) => [s.run, s.position, s.kind, s.description, s.interrupted]), [['crashed', 2, 'deploy', 'deploy prod', false]]);
    assert.deepEqual(seen[0]!.input, { to: 'prod' });
    assert.ok(events.some((e) => e.type === 'in-flight' && e.position === 2 && e.decision === 'answered'));
    const entries = await readRunEntries(store, 'crashed');
    assert.deepEqual(entries.map((e) => `${e.step} ${e.phase} ${e.resolution ?? ''}`), ['1 result ', '2 intent ', '2 result in-flight-reported']);
    const again = await open(store, 'crashed');
    await again.step('work', { n: 1 }, () => assert.fail('replayed'));
    assert.equal(await deploy(again, () => assert.fail('asked again'), () => assert.fail('ran')), 'outcome unknown');
    again.close();

    // {rerun: true} runs it again (a second run left the same way).
    await dieInside(store, 'rerun', async () => {});
    const rerun = await open(store, 'rerun');
    let runs = 0;
    assert.equal(await deploy(rerun, () => ({ rerun: true }), () => (runs++, 'deployed')), 'deployed');
    rerun.close();
    assert.equal(runs, 1);
    assert.deepEqual((await readRunEntries(store, 'rerun')).map((e) => `${e.step} ${e.phase} ${e.attempt}`), ['1 intent 1', '1 result 2']);
    assert.equal((await readRunRecord(store, 'rerun'))!.attempts.at(-1)!.rerun, 1, 'the attempt that ran it again names it');
  });

  it('reads an entry too big to keep in memory again from the store when replay reaches it', async () => {
    const store = new MemoryJournalStore();
    const big = 'x'.repeat(200 * 1024);
    const first = await open(store, 'big');
    await first.step('read_file', { path: 'big.txt' }, () => big);
    await first.step('work', { n: 2 }, () => 'small');
    first.close();
    const second = await open(store, 'big');
    assert.equal(second.history.unread(1) !== undefined, true, 'the big entry is held by its blob id only');
    assert.equal(await second.step('read_file', { path: 'big.txt' }, () => assert.fail('ran')), big);
    assert.equal(await second.step('work', { n: 2 }, () => assert.fail('ran')), 'small');
    second.close();
  });

  it('lets one process at a time hold a run (ERUNLOCKED), and the next once it is closed', async () => {
    const store = new MemoryJournalStore();
    const first = await open(store, 'locked');
    await assert.rejects(open(store, 'locked'), (error: Error & { code?: string }) => error.code === 'ERUNLOCKED');
    first.close();
    const second = await open(store, 'locked');
    second.close();
  });
});
