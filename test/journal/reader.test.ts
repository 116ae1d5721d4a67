// Reading runs back from the branch (src/journal/reader.ts), on the in-memory store: run ids in
// order (only folders), a run's entry files in step order across its shards of 100 steps (an intent
// just before its result) and their entries parsed; the entries after a step read from their shards
// alone; a missing run is undefined, not an error; a misnamed file, a shard that is no folder and an
// entry that is not what its name says are refused as corrupt, naming the path.
// The same reading on git's objects and of fetched, hostile journals: test/valve/history.test.ts,
// test/cli/hostile-journal.test.ts.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { CorruptEntryError } from '../../src/errors/index.js';
import { serializeEntry, type JournalEntry } from '../../src/journal/entry.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { listRunIds, listRunStepFiles, readKeptEntries, readRunEntries, readRunRecord, readStepFiles } from '../../src/journal/reader.js';
import { openRunJournal } from '../../src/valve/open-journal.js';

const STEPS = 105;
let store: MemoryJournalStore;

before(async () => {
  store = new MemoryJournalStore();
  for (const run of ['long', 'alpha']) {
    const journal = await openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test' });
    const steps = run === 'long' ? STEPS : 1;
    // Every tenth step is not safe to repeat: its intent is recorded before its result.
    for (let n = 1; n <= steps; n++) await journal.step(n % 10 === 0 ? 'deploy' : 'work', { n }, () => n * 2, { intent: n % 10 === 0 });
    journal.close();
  }
});

const corrupt = (path: RegExp, reason: RegExp) => (error: unknown) => error instanceof CorruptEntryError && path.test(error.message) && reason.test(error.message);

describe('reading runs back', () => {
  it('lists run ids in order, folders only; a run that is not there has no record and no entries', async () => {
    await store.append([{ path: 'runs/README', content: 'not a run\n' }], 'a stray file');
    assert.deepEqual(await listRunIds(store), ['alpha', 'long']);
    assert.equal(await readRunRecord(store, 'nosuch'), undefined);
    assert.deepEqual(await listRunStepFiles(store, 'nosuch'), []);
    assert.deepEqual(await readRunEntries(store, 'nosuch'), []);
    assert.deepEqual(await listRunIds(new MemoryJournalStore()), []);
    assert.equal((await readRunRecord(store, 'long'))?.task, 'task of long');
  });

  it("lists a run's entry files in step order across its shards, each intent just before its result, and reads them so", async () => {
    const files = await listRunStepFiles(store, 'long');
    assert.equal(files.length, STEPS + Math.floor(STEPS / 10));
    assert.deepEqual(files.slice(18, 22).map((f) => `${f.step} ${f.kind} ${f.phase}`), ['18 work result', '19 work result', '20 deploy intent', '20 deploy result']);
    assert.deepEqual(files.filter((f) => f.step >= 99 && f.step <= 101).map((f) => f.path), [
      'runs/long/steps/000/000099-work.json',
      'runs/long/steps/001/000100-deploy.intent.json',
      'runs/long/steps/001/000100-deploy.json',
      'runs/long/steps/001/000101-work.json',
    ]);
    const steps = files.map((f) => f.step);
    assert.deepEqual(steps, [...steps].sort((a, b) => a - b));

    const entries = await readRunEntries(store, 'long');
    assert.deepEqual(entries.map((e) => `${e.step} ${e.phase}`), files.map((f) => `${f.step} ${f.phase}`));
    assert.deepEqual(entries.filter((e) => e.phase === 'result').map((e) => e.result), Array.from({ length: STEPS }, (_, i) => (i + 1) * 2));
    const some = await readStepFiles(store, 'long', files.slice(-2));
    assert.deepEqual(some.map((e) => [e.step, e.result]), [[104, 208], [105, 210]]);
  });

  it('reads the entries after a step from their shards alone, telling each one as it is read', async () => {
    const told: number[] = [];
    const kept = await readKeptEntries(store, 'long', (entry: JournalEntry) => told.push(entry.step), 100);
    assert.deepEqual(told, [101, 102, 103, 104, 105]);
    assert.equal(kept.length, 5);
    const all: number[] = [];
    await readKeptEntries(store, 'long', (entry) => all.push(entry.step));
    assert.equal(all.length, STEPS + Math.floor(STEPS / 10));
  });

  it('refuses a misnamed file, a shard that is no folder and an entry that is not what its name says, naming the path', async () => {
    const bad = new MemoryJournalStore();
    await bad.append([{ path: 'runs/named/steps/000/notes.txt', content: 'hello\n' }], 'misnamed');
    await assert.rejects(listRunStepFiles(bad, 'named'), corrupt(/runs\/named\/steps\/000\/notes\.txt/, /its name is not <step>-<kind>\[\.intent\]\.json/));
    await bad.append([{ path: 'runs/flat/steps/000', content: 'a file\n' }], 'a shard that is a file');
    await assert.rejects(readRunEntries(bad, 'flat'), corrupt(/runs\/flat\/steps\/000/, /should be a directory of step files/));

    const [entry] = await readRunEntries(store, 'alpha');
    await bad.append([{ path: 'runs/moved/steps/000/000002-work.json', content: serializeEntry(entry!) }], 'an entry under another name');
    await assert.rejects(readRunEntries(bad, 'moved'), (error: unknown) => error instanceof CorruptEntryError && /runs\/moved\/steps\/000\/000002-work\.json/.test(error.message));
  });
});
