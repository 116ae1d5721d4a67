// A run's run.json as the valve writes it (src/valve/run-record.ts), on the in-memory store: made
// with the first entry, each process's attempt added at its first write (none for a process that
// only replayed), an attempt of its own for the next message of a run held open, how each attempt
// ended (finished where HEAD was, failed with its error, refused, interrupted, stopped at a limit),
// a failure that later succeeded cleared from the run's status, an attempt killed while running a
// step again noted by the next one, redaction applied; and nothing written when there is nothing to say.
// What run.json says to a user after real kills and signals: test/cli/interrupt.test.ts, test/cli/crash-resume.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenJournalOptions } from '../../src/index.js';
import { readRunRecord } from '../../src/journal/reader.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { openRunJournal } from '../../src/valve/open-journal.js';

const HEAD = 'c'.repeat(40);
const open = (store: MemoryJournalStore, run: string, extra: Partial<OpenJournalOptions> = {}) =>
  openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', ...extra });
const subject = async (store: MemoryJournalStore) => (await store.log())[0]!.message.split('\n')[0];
const record = async (store: MemoryJournalStore, run: string) => (await readRunRecord(store, run))!;

describe("run.json, as the valve writes it", () => {
  it("adds each process's attempt at its first write, with how it runs commands; a process that only replays adds none", async () => {
    const store = new MemoryJournalStore({ local: { headCommit: HEAD } });
    const first = await open(store, 'attempts', { sandbox: () => ({ kind: 'bwrap', network: false, gitWrites: false }) });
    assert.equal(await readRunRecord(store, 'attempts'), undefined, 'nothing before the first entry');
    await first.step('work', { n: 1 }, () => 1);
    first.close();
    const made = await record(store, 'attempts');
    assert.equal(made.task, 'task of attempts');
    assert.equal(made.baseCommit, HEAD);
    assert.equal(made.status, 'running');
    assert.deepEqual(made.attempts.map((a) => [a.number, a.firstLiveStep, a.pid, a.sandbox?.kind]), [[1, 1, process.pid, 'bwrap']]);
    assert.deepEqual(made.sandbox, { kind: 'bwrap', network: false, gitWrites: false });

    const replaying = await open(store, 'attempts');
    const tip = store.tip;
    await replaying.step('work', { n: 1 }, () => assert.fail('replayed'));
    replaying.close();
    assert.equal(store.tip, tip, 'a process that only replayed writes no attempt');

    // A run held open: each message is an attempt of its own, from its first write on.
    const held = await open(store, 'attempts');
    await held.step('work', { n: 1 }, () => assert.fail('replayed'));
    await held.step('work', { n: 2 }, () => 2);
    held.record.newAttempt();
    await held.step('work', { n: 3 }, () => 3);
    held.close();
    assert.deepEqual((await record(store, 'attempts')).attempts.map((a) => [a.number, a.firstLiveStep]), [[1, 1], [2, 2], [3, 3]]);
  });

  it('says how an attempt ended: a failure keeps its error, a later success clears it from the run and notes where HEAD was', async () => {
    const store = new MemoryJournalStore({ local: { headCommit: HEAD } });
    const failing = await open(store, 'ends');
    await failing.step('work', { n: 1 }, () => 1);
    await failing.finish('failed', { error: 'the model is unreachable' });
    failing.close();
    assert.equal(await subject(store), 'ends failed: the model is unreachable');
    const failed = await record(store, 'ends');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error, 'the model is unreachable');

    const succeeding = await open(store, 'ends');
    await succeeding.step('work', { n: 1 }, () => assert.fail('replayed'));
    await succeeding.step('work', { n: 2 }, () => 2);
    await succeeding.finish('finished', { final: 'two' });
    succeeding.close();
    const tip = store.tip;
    const replaying = await open(store, 'ends');
    for (const n of [1, 2]) await replaying.step('work', { n }, () => assert.fail('replayed'));
    await replaying.finish('finished', { final: 'two' });
    replaying.close();
    assert.equal(store.tip, tip, 'a replay that finishes as recorded writes nothing');
    const finished = await record(store, 'ends');
    assert.equal(finished.status, 'finished');
    assert.equal(finished.final, 'two');
    assert.equal(finished.error, undefined, "a success clears the earlier attempt's error");
    assert.deepEqual(finished.attempts.map((a) => ({ how: a.end?.how, error: a.end?.error, head: a.end?.head })), [
      { how: 'failed', error: 'the model is unreachable', head: undefined },
      { how: 'finished', error: undefined, head: HEAD },
    ]);
    assert.equal(finished.totals?.lastStep, 2);
  });

  it('a refusal ends the run as finishing does and says so; a later answer clears it', async () => {
    const store = new MemoryJournalStore();
    const refusing = await open(store, 'refusal');
    await refusing.step('model', { turn: 1 }, () => 'no');
    await refusing.finish('finished', { final: 'I will not do that.', refused: true });
    refusing.close();
    assert.equal(await subject(store), 'refusal refused: I will not do that.');
    assert.equal((await record(store, 'refusal')).refused, true);
    const answering = await open(store, 'refusal');
    await answering.step('model', { turn: 1 }, () => assert.fail('replayed'));
    await answering.step('model', { turn: 2 }, () => 'yes');
    await answering.finish('finished', { final: 'Done.' });
    answering.close();
    assert.equal((await record(store, 'refusal')).refused, undefined);
    assert.equal(await subject(store), 'refusal finished: Done.');
  });

  it('notes an interruption and a stop at a limit on the attempt, with the totals; nothing for a process that wrote nothing', async () => {
    const store = new MemoryJournalStore();
    const nothing = await open(store, 'quiet');
    await nothing.record.markInterrupted('Ctrl-C');
    await nothing.finish('failed', { error: 'stopped before anything ran' });
    nothing.close();
    assert.equal(await readRunRecord(store, 'quiet'), undefined, 'a run that never wrote has no run.json to note it in');
    assert.deepEqual(await store.log(), []);

    const interrupted = await open(store, 'stopped');
    await interrupted.step('work', { n: 1 }, () => 1);
    await interrupted.record.markInterrupted('Ctrl-C');
    interrupted.close();
    assert.equal(await subject(store), 'stopped interrupted (Ctrl-C) in attempt 1');
    const first = (await record(store, 'stopped')).attempts[0]!;
    assert.equal(first.end?.how, 'interrupted');
    assert.equal(first.interruptedAt, first.end?.at);

    const limited = await open(store, 'stopped');
    await limited.step('work', { n: 1 }, () => assert.fail('replayed'));
    await limited.step('work', { n: 2 }, () => 2);
    await limited.record.markStopped('--max-steps');
    limited.close();
    assert.equal(await subject(store), 'stopped stopped at its --max-steps limit in attempt 2');
    const stopped = await record(store, 'stopped');
    assert.equal(stopped.status, 'running', 'a run stopped at a limit is unfinished');
    assert.deepEqual(stopped.attempts[1]!.end && { how: stopped.attempts[1]!.end.how, limit: stopped.attempts[1]!.end.limit }, { how: 'limit', limit: '--max-steps' });
    assert.equal(stopped.attempts[0]!.end?.how, 'interrupted', 'the earlier attempt keeps its own end');
    assert.equal(stopped.totals?.lastStep, 2);
  });

  it('an attempt killed while running a step again is noted as killed by the next attempt that writes', async () => {
    const store = new MemoryJournalStore();
    const deploy = (journal: Awaited<ReturnType<typeof open>>, entered: () => void) =>
      void journal.step('deploy', { to: 'prod' }, () => (entered(), new Promise<never>(() => {})), { intent: true, onInFlight: (() => ({ rerun: true })) as never });
    const first = await open(store, 'killed');
    await new Promise<void>((entered) => deploy(first, entered));
    first.close(); // killed inside the step: its intent recorded, no result
    const second = await open(store, 'killed');
    await new Promise<void>((entered) => deploy(second, entered));
    second.close(); // ran it again (run.json names the rerun) and was killed before recording anything else
    assert.deepEqual((await record(store, 'killed')).attempts.map((a) => [a.number, a.rerun, a.killed]), [[1, undefined, undefined], [2, 1, undefined]]);

    const third = await open(store, 'killed');
    assert.equal(third.record.killedAttempt?.number, 2);
    await third.step('deploy', { to: 'prod' }, () => 'deployed', { intent: true, onInFlight: (() => ({ rerun: true })) as never });
    third.close();
    const attempts = (await record(store, 'killed')).attempts;
    assert.equal(attempts[1]!.killed?.noticedBy, 3);
    assert.ok(attempts[1]!.killed?.noticedAt);
    assert.equal(attempts[0]!.killed, undefined, 'only the attempt killed while running it again');
  });

  it('is redacted as every entry is', async () => {
    const store = new MemoryJournalStore();
    const redact = <V>(value: V): V => JSON.parse(JSON.stringify(value).replaceAll('hunter2', '[REDACTED]')) as V;
    const journal = await open(store, 'secret', { task: 'log in with hunter2', redact });
    await journal.step('work', { n: 1 }, () => 1);
    await journal.finish('finished', { final: 'used hunter2' });
    journal.close();
    const written = await record(store, 'secret');
    assert.equal(written.task, 'log in with [REDACTED]');
    assert.equal(written.final, 'used [REDACTED]');
  });
});
