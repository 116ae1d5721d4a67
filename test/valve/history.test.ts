// What a run remembers of its past once it is replayed and goes on live: its totals and last
// checkpoint are added up as entries are read (and as they are written), never by reading every
// entry again; a step written live is not kept; the step identities a later step is checked against
// (the divergence check, a retried intent) still are. On the in-memory store, but for the push of a
// fenced intent (a real remote).
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DivergenceError, openJournal, type OpenJournalOptions } from '../../src/index.js';
import { History } from '../../src/valve/history.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import { countTotals } from '../../src/valve/run-totals.js';
import { PushFailedError } from '../../src/errors/index.js';
import { JournalPusher } from '../../src/journal/pusher.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// Every run of this file on one in-memory store (each test its own run); the checkpoint tree is an id the steps name.
const store = new MemoryJournalStore();
const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

function open(run: string, extra: Partial<OpenJournalOptions> = {}) {
  return openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', ...extra });
}

async function entriesOf(run: string) {
  return readRunEntries(store, run);
}

async function recordOf(run: string) {
  return (await readRunRecord(store, run))!;
}

const usage = (input: number, output: number) => () => ({ inputTokens: input, outputTokens: output, cacheReadInputTokens: 7 });

// Steps 1–3 finished (a model call with usage, a command with intent and a checkpoint, a read),
// step 4's intent written and its function failed: the run a crash in step 4 leaves.
async function recordFirstAttempt(run: string): Promise<void> {
  const journal = await open(run);
  await journal.step('model', { turn: 1 }, () => ({ text: 'run the tests' }), { usage: usage(100, 10) });
  await journal.step('run_bash', { command: 'npm test' }, () => ({ exit: 0 }), { intent: true, checkpoint: () => ({ tree }) });
  await journal.step('read_file', { path: 'a.txt' }, () => 'hello');
  await assert.rejects(journal.step('run_bash', { command: 'npm run deploy' }, () => Promise.reject(new Error('killed')), { intent: true }), /killed/);
  journal.close();
}

describe("a run's history after replay", () => {
  it('knows, as opened, its last checkpoint and that its last step is in flight, without listing its entries', async () => {
    await recordFirstAttempt('opened');
    const journal = await open('opened');
    const entries = await entriesOf('opened');
    const checkpointed = entries.find((e) => e.step === 2 && e.phase === 'result')!;
    assert.deepEqual(journal.history.lastCheckpoint, { tree, step: 2, finishedAt: checkpointed.finishedAt });
    assert.equal(journal.history.inFlight, true);
    assert.equal(journal.history.lastPosition, 4);
    assert.equal(journal.history.finishedCount, 3);
    assert.deepEqual(journal.history.totals(), countTotals(entries), 'the totals added up while reading are those of the entries');
    journal.close();
    // The same from entries given whole (the history counts them itself).
    const given = new History('opened', entries);
    assert.deepEqual(given.totals(), countTotals(entries));
    assert.deepEqual(given.lastCheckpoint, journal.history.lastCheckpoint);
    assert.equal(given.inFlight, true);
  });

  it("replayed then run on live, a run's totals in run.json are those of a fresh read of all its entries, at its first write and at its end", async () => {
    await recordFirstAttempt('totals');
    const journal = await open('totals');
    await journal.step('model', { turn: 1 }, () => assert.fail('replayed'), { usage: usage(1, 1) });
    await journal.step('run_bash', { command: 'npm test' }, () => assert.fail('replayed'), { intent: true });
    await journal.step('read_file', { path: 'a.txt' }, () => assert.fail('replayed'));
    // Step 4 is in flight: rerun. This process's first write is run.json alone, before the step runs
    // again (its attempt, naming the step it reruns, so a kill before the result leaves a trace),
    // counting the entries then: step 4 still in flight.
    let atFirstWrite: Awaited<ReturnType<typeof recordOf>> | undefined;
    let entriesThen: Awaited<ReturnType<typeof entriesOf>> = [];
    await journal.step('run_bash', { command: 'npm run deploy' }, async () => {
      atFirstWrite = await recordOf('totals');
      entriesThen = await entriesOf('totals');
      return { exit: 0 };
    }, { intent: true, onInFlight: () => ({ rerun: true }) });
    assert.deepEqual(atFirstWrite!.totals, countTotals(entriesThen));
    assert.deepEqual([atFirstWrite!.totals!.files, atFirstWrite!.totals!.inFlight], [5, true]);
    assert.equal(atFirstWrite!.attempts.at(-1)!.firstLiveStep, 4);
    assert.equal(atFirstWrite!.attempts.at(-1)!.rerun, 4);
    await journal.step('model', { turn: 2 }, () => ({ text: 'done' }), { usage: usage(200, 20), checkpoint: () => ({ tree }) });
    await journal.finish('finished', { final: 'done' });
    journal.close();
    const entries = await entriesOf('totals');
    const record = await recordOf('totals');
    assert.deepEqual(record.totals, countTotals(entries));
    assert.deepEqual(record.totals, {
      files: 7,
      lastStep: 5,
      modelCalls: 2,
      tokens: { input: 300, output: 30, cacheCreation: 0, cacheRead: 14 },
      lastActivity: record.totals!.lastActivity,
      inFlight: false,
    });
    assert.ok(record.totals!.lastActivity! >= entries.at(-1)!.finishedAt!);
  });

  it('keeps nothing of a step written live, yet checks a step asked for again after its function threw against the intent it wrote', async () => {
    const first = await open('live');
    for (let i = 1; i <= 3; i++) await first.step('work', { i }, () => i);
    first.close();

    const journal = await open('live');
    for (let i = 1; i <= 3; i++) assert.equal(await journal.step('work', { i }, () => assert.fail('replayed')), i);
    assert.deepEqual(journal.history.entries(), [], 'the steps handed back are let go');
    // The first live step takes the position after the last recorded one.
    await assert.rejects(journal.step('deploy', { to: 'prod' }, () => Promise.reject(new Error('network down')), { intent: true }), /network down/);
    assert.deepEqual(journal.history.entries().map((e) => `${e.step} ${e.phase}`), ['4 intent'], 'its intent is held: the retry is checked against it');
    await assert.rejects(
      journal.step('deploy', { to: 'staging' }, () => assert.fail('a divergence runs nothing'), { intent: true }),
      (error: unknown) => error instanceof DivergenceError && error.data.position === 4 && error.data.differences.some((d) => d.includes('"to"')),
    );
    assert.equal(await journal.step('deploy', { to: 'prod' }, () => 'deployed', { intent: true, onInFlight: () => ({ rerun: true }) }), 'deployed');
    assert.equal(await journal.step('work', { i: 5 }, () => 5), 5);
    assert.deepEqual(journal.history.entries(), [], 'nothing is held for steps written live');
    assert.deepEqual([journal.history.lastPosition, journal.history.finishedCount, journal.history.inFlight], [5, 5, false]);
    assert.deepEqual(journal.stats, { replayed: 3, live: 2 });
    journal.close();
    assert.deepEqual(
      (await entriesOf('live')).map((e) => `${e.step} ${e.kind} ${e.phase} ${e.attempt}`),
      ['1 work result 1', '2 work result 1', '3 work result 1', '4 deploy intent 2', '4 deploy result 2', '5 work result 2'],
    );

    // Opened again, every step replays, and a different step at a replayed position is a divergence.
    const again = await open('live');
    for (let i = 1; i <= 3; i++) await again.step('work', { i }, () => assert.fail('replayed'));
    await assert.rejects(
      again.step('deploy', { to: 'staging' }, () => assert.fail('a divergence runs nothing'), { intent: true }),
      (error: unknown) => error instanceof DivergenceError && error.data.position === 4,
    );
    again.close();
  });

  it('a step that throws after its result was recorded (an event handler) keeps its position: the next step takes the one after, and nothing is written over', async () => {
    let failOn: number | undefined = 2;
    const journal = await open('recorded-then-threw', {
      onEvent: (event) => {
        if (event.type === 'recorded' && event.position === failOn) throw new Error('the printer broke');
      },
    });
    await journal.step('work', { i: 1 }, () => 1);
    let runs = 0;
    await assert.rejects(journal.step('work', { i: 2 }, () => ++runs), /the printer broke/);
    failOn = undefined;
    await journal.step('work', { i: 3 }, () => 3);
    journal.close();
    assert.equal(runs, 1);
    assert.deepEqual((await entriesOf('recorded-then-threw')).map((e) => `${e.step} ${JSON.stringify(e.input)}`), ['1 {"i":1}', '2 {"i":2}', '3 {"i":3}']);
    const again = await open('recorded-then-threw');
    for (let i = 1; i <= 3; i++) assert.equal(await again.step('work', { i }, () => assert.fail('replayed')), i === 2 ? 1 : i);
    again.close();
  });

  it('an intent whose push fails gives its position back: the retry is checked against it and finishes it there, and the run opens again', async () => {
    const pushed = await scratch.repo();
    const remote = scratch.dir('savepoint-remote-');
    await gitOut(remote, ['init', '-q', '--bare']);
    writeFileSync(join(remote, 'hooks', 'pre-receive'), '#!/bin/sh\necho "refused by policy" >&2\nexit 1\n');
    chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
    await pushed.git('remote', 'add', 'origin', remote);
    const pusher: JournalPusher = new JournalPusher(() => journal.store, 'origin', 'pushed');
    const journal: Awaited<ReturnType<typeof openJournal>> = await openJournal({
      dir: pushed.root,
      run: 'pushed',
      task: 'push me',
      store: { afterAppend: pusher.afterAppend, beforeFence: pusher.settle },
    });
    let ran = 0;
    // A fenced step (a one-shot effect another machine must see started) waits for its intent's push.
    await assert.rejects(journal.step('deploy', { to: 'prod' }, () => ++ran, { fence: true }), PushFailedError);
    assert.equal(ran, 0, 'the intent landed, its push failed: nothing ran');
    await assert.rejects(
      journal.step('deploy', { to: 'prod' }, () => ++ran, { fence: true, onInFlight: (step) => (assert.equal(step.position, 1), { rerun: true }) }),
      PushFailedError,
    );
    assert.equal(ran, 1);
    pusher.close();
    journal.close();
    assert.deepEqual((await readRunEntries(await JournalStore.open(pushed.root), 'pushed')).map((e) => `${e.step} ${e.phase}`), ['1 intent', '1 result']);
    const again = await openJournal({ dir: pushed.root, run: 'pushed' });
    assert.equal(await again.step('deploy', { to: 'prod' }, () => assert.fail('replayed'), { intent: true }), 1);
    again.close();
  });

  it("the first live step after a replay parses no replayed entry again (run.json's totals were added up as they were read)", async () => {
    const run = 'first-live';
    const steps = 200;
    const first = await open(run);
    for (let i = 1; i <= steps; i++) await first.step('run_bash', { command: `test ${i}` }, () => ({ output: `✔ case ${i} passed\n`.repeat(20) }), { usage: usage(1, 1) });
    first.close();
    const journal = await open(run);
    for (let i = 1; i <= steps; i++) await journal.step('run_bash', { command: `test ${i}` }, () => assert.fail('replayed'));
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => (parsed++, parse(...args));
    try {
      await journal.step('run_bash', { command: 'live' }, () => ({ output: 'live' }));
      await journal.finish('finished', { final: 'done' });
    } finally {
      JSON.parse = parse;
    }
    journal.close();
    assert.ok(parsed < 10, `the first live step and the finish parsed ${parsed} JSON texts, not one per replayed entry`);
    assert.deepEqual((await recordOf(run)).totals, countTotals(await entriesOf(run)));
    assert.equal((await recordOf(run)).totals!.files, steps + 1);
  });
});
