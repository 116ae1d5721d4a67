// What a run's background commands read from its journal (src/session/background-journal.ts), in
// this process on a real repository: how many background starts the run records (a foreground
// command is none), and for the n-th, its command, its step and when it stopped with the attempt
// that started it: at that attempt's recorded end (finished, interrupted), or, for an attempt that
// was killed, at the last step it recorded (not a later attempt's). The background tool end to end:
// test/cli/background.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { backgroundJournal } from '../../src/session/background-journal.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import type { RunJournal } from '../../src/valve/run-journal.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
let store: JournalStore;

before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'one\n' }, commit: true });
  store = await JournalStore.open(repo.root);
});
after(async () => {
  await repo.remove();
});

const open = (run: string) => openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test' });
// A run_bash step as the tool records it: its intent first, then its result.
const bash = (journal: RunJournal, command: string, background = false) =>
  journal.step('run_bash', { command, ...(background ? { run_in_background: true } : {}) }, () => 'ok', { intent: true });

describe('the background commands of a run, read from its journal', () => {
  it('counts the background starts, not the foreground commands, and says what each ran and that it stopped when its attempt finished', async () => {
    const journal = await open('finished');
    const background = backgroundJournal(store, 'finished', journal);
    assert.equal(await background.startsRecorded(), 0, 'a run that started none');
    await bash(journal, 'npm run dev', true);
    await bash(journal, 'ls');
    await journal.step('read_file', { path: 'a.txt' }, () => 'one');
    await bash(journal, 'tail -f log', true);
    assert.equal(await background.startsRecorded(), 2);
    await journal.finish('finished', { final: 'done' });
    journal.close();

    const end = (await readRunRecord(store, 'finished'))!.attempts[0]!.end!;
    assert.deepEqual(await background.pastStart(1), { command: 'npm run dev', step: 1, stoppedAt: end.at, stoppedHow: 'when that savepoint process ended: the run finished' });
    assert.deepEqual(await background.pastStart(2), { command: 'tail -f log', step: 4, stoppedAt: end.at, stoppedHow: 'when that savepoint process ended: the run finished' });
    assert.equal(await background.pastStart(3), undefined);
  });

  it('an interrupted attempt stopped at its recorded end', async () => {
    const journal = await open('interrupted');
    await bash(journal, 'npm run dev', true);
    await journal.record.markInterrupted('Ctrl-C');
    journal.close();
    const attempt = (await readRunRecord(store, 'interrupted'))!.attempts[0]!;
    const past = await backgroundJournal(store, 'interrupted', journal).pastStart(1);
    assert.deepEqual(past, { command: 'npm run dev', step: 1, stoppedAt: attempt.end!.at, stoppedHow: 'when that savepoint process ended: the run was interrupted' });
  });

  it("a killed attempt stopped at or soon after the last step it recorded, not a later attempt's", async () => {
    const first = await open('killed');
    await bash(first, 'npm run dev', true);
    await first.step('read_file', { path: 'a.txt' }, () => 'one');
    first.close(); // no end recorded: as a kill -9 leaves it
    const second = await open('killed');
    await bash(second, 'npm run dev', true); // replayed, as the two steps before are
    await second.step('read_file', { path: 'a.txt' }, () => 'one');
    await second.step('read_file', { path: 'c.txt' }, () => 'three');
    await second.step('read_file', { path: 'b.txt' }, () => 'two');
    const lastOfFirst = (await readRunEntries(store, 'killed')).filter((e) => e.attempt === 1).at(-1)!;
    assert.equal(lastOfFirst.step, 2);
    const past = await backgroundJournal(store, 'killed', second).pastStart(1);
    second.close();
    assert.deepEqual(past, {
      command: 'npm run dev',
      step: 1,
      stoppedAt: lastOfFirst.finishedAt,
      stoppedHow: 'that savepoint process was killed (a crash or kill -9: no end was recorded); this is when it recorded its last step, #2, so it stopped at or soon after that time',
    });
  });
});
