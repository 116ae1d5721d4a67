// The valve as a library: `openJournal(...).step(...)` runs a step live once, records it, and hands
// the recorded result back on every later run without calling anything; events, run.json, commit
// subjects and entries are what users and the git CLI see. What is the valve's own logic (resuming,
// handing back and letting go, failing steps, refused ids and options) runs on the in-memory store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DivergenceError,
  UsageError,
  openJournal,
  stepKey,
  type OpenJournalOptions,
  type StepEvent,
} from '../../src/index.js';
import { JournalStore } from '../../src/journal/store.js';
import type { RunConfig } from '../../src/journal/entry.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import type { FaultPoint } from '../../src/journal/store-options.js';
import { openRun, openRunJournal } from '../../src/valve/open-journal.js';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import { assertFsckClean, commitCount, gitOut, journalFile, journalFiles, journalSubjects } from '../helpers/git.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'hello\n' }, commit: true });
});
after(async () => {
  await repo.remove();
});

function open(run: string, extra: Partial<OpenJournalOptions> = {}) {
  return openJournal({ dir: repo.root, run, task: `task of ${run}`, model: 'claude-test', ...extra });
}

// A run on the in-memory store (what the valve does is the same on either store).
function openIn(store: MemoryJournalStore, run: string, extra: Partial<OpenJournalOptions> = {}) {
  return openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', ...extra });
}

// The step files of `run` on the in-memory store's branch.
async function stepFiles(store: MemoryJournalStore, run: string): Promise<string[]> {
  return [...((await store.treeAt(`runs/${run}/steps/000`))?.keys() ?? [])].map((name) => `runs/${run}/steps/000/${name}`);
}

// A small agent loop: a read, a command (intent first), an edit, a model call with usage.
async function loop(journal: Awaited<ReturnType<typeof open>>, calls: string[]) {
  const read = await journal.step('read_file', { path: 'a.txt' }, async () => (calls.push('read'), 'hello'), {
    describe: 'read_file a.txt',
  });
  const test = await journal.step(
    'run_bash',
    { command: 'pytest' },
    async () => {
      calls.push('bash');
      await sleep(20);
      return { exit: 1, output: '1 failed, 4 passed' };
    },
    { intent: true, describe: 'run_bash "pytest"', summarize: (r) => `exit ${r.exit}: ${r.output}` },
  );
  const edit = await journal.step('edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'hi' }, () => (calls.push('edit'), { changed: 1 }), {
    describe: 'edit_file a.txt',
    summarize: () => '1 line changed',
  });
  const answer = await journal.step('model', { turn: 1 }, () => (calls.push('model'), { text: 'All tests pass now.' }), {
    describe: 'model turn 1',
    summarize: (r) => `answers "${r.text}"`,
    usage: () => ({ inputTokens: 120, outputTokens: 12 }),
  });
  return [read, test, edit, answer];
}

describe('a run recorded live', () => {
  const events: StepEvent[] = [];
  const calls: string[] = [];
  let results: unknown[];

  before(async () => {
    const journal = await open('lib', { onEvent: (e) => events.push(e) });
    results = await loop(journal, calls);
    assert.deepEqual(journal.stats, { replayed: 0, live: 4 });
    await journal.finish('finished', { final: 'All tests pass now.' });
    journal.close();
  });

  it('step runs each function once and returns its live result', () => {
    assert.deepEqual(calls, ['read', 'bash', 'edit', 'model']);
    assert.deepEqual(results, ['hello', { exit: 1, output: '1 failed, 4 passed' }, { changed: 1 }, { text: 'All tests pass now.' }]);
  });

  it("emits 'started' then 'recorded' for every live step, with its position and how long it took", () => {
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.position}`),
      ['started 1', 'recorded 1', 'started 2', 'recorded 2', 'started 3', 'recorded 3', 'started 4', 'recorded 4'],
    );
    const recorded = events.filter((e): e is Extract<StepEvent, { type: 'recorded' }> => e.type === 'recorded');
    assert.equal(recorded[1]!.kind, 'run_bash');
    assert.equal(recorded[1]!.description, 'run_bash "pytest"');
    assert.equal(recorded[1]!.summary, 'exit 1: 1 failed, 4 passed');
    assert.ok(recorded[1]!.durationMs >= 15, `the 20 ms command took ${recorded[1]!.durationMs} ms`);
    for (const event of recorded) assert.ok(Number.isInteger(event.durationMs) && event.durationMs >= 0);
  });

  it('records valid entries: step number, kind, deterministic key, input, result, timings, usage', async () => {
    const store = await JournalStore.open(repo.root);
    const entries = await readRunEntries(store, 'lib');
    assert.deepEqual(
      entries.map((e) => `${e.step} ${e.kind} ${e.phase}`),
      ['1 read_file result', '2 run_bash intent', '2 run_bash result', '3 edit_file result', '4 model result'],
    );
    const bash = entries[2]!;
    assert.equal(bash.format, 'savepoint/entry@1');
    assert.equal(bash.run, 'lib');
    assert.equal(bash.key, stepKey('run_bash', { command: 'pytest' }));
    assert.deepEqual(bash.input, { command: 'pytest' });
    assert.deepEqual(bash.result, { exit: 1, output: '1 failed, 4 passed' });
    assert.equal(bash.summary, 'exit 1: 1 failed, 4 passed');
    assert.equal(bash.attempt, 1);
    assert.ok(!Number.isNaN(Date.parse(bash.startedAt)) && !Number.isNaN(Date.parse(bash.finishedAt!)));
    assert.ok(bash.durationMs! >= 15);
    assert.equal(entries[1]!.result, undefined, 'the intent has no result');
    assert.deepEqual(entries[4]!.usage, { inputTokens: 120, outputTokens: 12 });
    // The files are plain, pretty-printed JSON that git shows as they are.
    const text = await journalFile(repo.root, 'runs/lib/steps/000/000002-run_bash.json');
    assert.deepEqual(JSON.parse(text), bash);
    assert.ok((await journalFiles(repo.root, 'runs/lib')).includes('runs/lib/steps/000/000002-run_bash.intent.json'));
  });

  it('finish() writes run.json with the status, final answer, task, model, base commit and attempt', async () => {
    const record = (await readRunRecord(await JournalStore.open(repo.root), 'lib'))!;
    assert.equal(record.status, 'finished');
    assert.equal(record.final, 'All tests pass now.');
    assert.equal(record.task, 'task of lib');
    assert.equal(record.model, 'claude-test');
    assert.equal(record.baseCommit, await gitOut(repo.root, ['rev-parse', 'HEAD']));
    assert.equal(record.attempts.length, 1);
    assert.equal(record.attempts[0]!.pid, process.pid);
    assert.equal(record.attempts[0]!.firstLiveStep, 1);
    assert.equal(JSON.parse(await journalFile(repo.root, 'runs/lib/run.json')).status, 'finished');
  });

  it('commit subjects read like "<run> #<step> <description> -> <summary>"', async () => {
    assert.deepEqual((await journalSubjects(repo.root)).reverse(), [
      'lib #1 read_file a.txt -> hello',
      'lib #2 run_bash "pytest" (started)',
      'lib #2 run_bash "pytest" -> exit 1: 1 failed, 4 passed',
      'lib #3 edit_file a.txt -> 1 line changed',
      'lib #4 model turn 1 -> answers "All tests pass now."',
      'lib finished: All tests pass now.',
    ]);
    await assertFsckClean(repo.root);
  });

  it('a finished run opened again replays every step with zero calls and writes nothing', async () => {
    const before = await commitCount(repo.root);
    const replayEvents: StepEvent[] = [];
    const again: string[] = [];
    const journal = await open('lib', { onEvent: (e) => replayEvents.push(e) });
    assert.equal(journal.record.current?.status, 'finished');
    const replayed = await loop(journal, again);
    await journal.finish('finished', { final: 'All tests pass now.' });
    journal.close();
    assert.deepEqual(again, [], 'no function was called');
    assert.deepEqual(replayed, results);
    assert.deepEqual(journal.stats, { replayed: 4, live: 0 });
    assert.deepEqual(
      replayEvents.map((e) => `${e.type} ${e.position}`),
      ['replayed 1', 'replayed 2', 'replayed 3', 'replayed 4'],
    );
    const bash = replayEvents[1] as Extract<StepEvent, { type: 'replayed' }>;
    assert.equal(bash.description, 'run_bash "pytest"');
    assert.equal(bash.summary, 'exit 1: 1 failed, 4 passed');
    assert.ok(bash.originalDurationMs >= 15, 'a replayed step reports how long it took originally');
    assert.equal(await commitCount(repo.root), before, 'replaying a finished run leaves the branch untouched');
  });
});

describe('resuming an unfinished run', () => {
  it('replays the recorded steps, then runs the rest live as a new attempt', async () => {
    const store = new MemoryJournalStore();
    const first = await openIn(store, 'resume');
    const calls: number[] = [];
    for (let i = 1; i <= 3; i++) await first.step('work', { i }, () => (calls.push(i), i * 10));
    first.close(); // no finish: the process "stopped"

    const events: StepEvent[] = [];
    const second = await openIn(store, 'resume', { onEvent: (e) => events.push(e) });
    const values: number[] = [];
    for (let i = 1; i <= 5; i++) values.push(await second.step('work', { i }, () => (calls.push(i), i * 10)));
    await second.finish('finished', { final: 'five' });
    second.close();

    assert.deepEqual(calls, [1, 2, 3, 4, 5], 'steps 1-3 ran once, in the first process only');
    assert.deepEqual(values, [10, 20, 30, 40, 50]);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.position}`),
      ['replayed 1', 'replayed 2', 'replayed 3', 'started 4', 'recorded 4', 'started 5', 'recorded 5'],
    );
        const record = (await readRunRecord(store, 'resume'))!;
    assert.deepEqual(
      record.attempts.map((a) => [a.number, a.firstLiveStep]),
      [
        [1, 1],
        [2, 4],
      ],
    );
    assert.deepEqual((await readRunEntries(store, 'resume')).map((e) => e.attempt), [1, 1, 1, 2, 2]);
  });

  it('a replayed result is handed back once and then let go: the history keeps no output it handed back, and the totals still add up', async () => {
    const store = new MemoryJournalStore();
    const output = (i: number) => `${'✔ a test passed\n'.repeat(200)}case ${i}`;
    const first = await openIn(store, 'let-go');
    for (let i = 1; i <= 3; i++) await first.step('run_bash', { command: `test ${i}` }, () => ({ output: output(i) }));
    await first.step('model', { turn: 1 }, () => ({ text: 'more' }), { usage: () => ({ inputTokens: 100, outputTokens: 10 }) });
    first.close();

    const second = await openIn(store, 'let-go');
    // Which steps the history still holds a result for: what a lookup of each would hand back.
    const held = () =>
      second.history
        .entries()
        .filter((e) => {
          const found = second.history.lookup({ position: e.step, kind: e.kind, key: e.key, description: e.description });
          return found?.result?.result !== null && found?.result?.result !== undefined;
        })
        .map((e) => e.step);
    assert.deepEqual(held(), [1, 2, 3, 4], 'read whole, each entry checked, when the run is opened');
    assert.ok(second.history.entries().every((e) => e.result === null), 'entries() lists no results: the outputs stay as bytes until replay reaches them');
    assert.deepEqual(second.history.entries()[0]!.input, { command: 'test 1' }, 'and each input, until its step is handed back');
    for (let i = 1; i <= 3; i++) {
      const result = await second.step('run_bash', { command: `test ${i}` }, () => assert.fail('replayed steps do not run'));
      assert.equal((result as { output: string }).output, output(i), 'the recorded result is handed back whole');
      assert.deepEqual(held(), Array.from({ length: 4 - i }, (_, k) => i + 1 + k), `after step ${i}, the history holds only the results not yet handed back`);
    }
    await second.step('model', { turn: 1 }, () => assert.fail('replayed'), { usage: () => ({ inputTokens: 1, outputTokens: 1 }) });
    await second.step('model', { turn: 2 }, () => ({ text: 'done' }), { usage: () => ({ inputTokens: 200, outputTokens: 20 }) });
    await second.finish('finished', { final: 'done' });
    second.close();
    assert.deepEqual(held(), [], 'nothing held once every step was handed back or written');
    const record = (await readRunRecord(store, 'let-go'))!;
    assert.equal(record.totals?.modelCalls, 2);
    assert.deepEqual(record.totals?.tokens, { input: 300, output: 30, cacheCreation: 0, cacheRead: 0 });
    // Opened again, the run replays in full: letting go was in memory only.
    const third = await openIn(store, 'let-go');
    assert.equal(((await third.step('run_bash', { command: 'test 1' }, () => assert.fail('replayed'))) as { output: string }).output, output(1));
    third.close();
  });

  it('replays outputs too big to keep in memory (read again when replay reaches them), intents included, and still tells a divergence at one', async () => {
    const store = new MemoryJournalStore();
    // 100 KB each, with characters outside Latin-1, over KEPT_BYTES: the history keeps their
    // identity and blob id, and reads each entry again at its step.
    const output = (i: number) => `${`✔ case ${i} passed │ ${'x'.repeat(40)}\n`.repeat(2000)}done ${i}`;
    const first = await openIn(store, 'big-outputs');
    for (let i = 1; i <= 3; i++) await first.step('run_bash', { command: `test ${i}` }, () => ({ output: output(i) }), { intent: true });
    await first.step('note', { i: 4 }, () => 'small');
    first.close();
    assert.ok((await store.fileAt('runs/big-outputs/steps/000/000002-run_bash.json'))!.length > 64 * 1024);

    const second = await openIn(store, 'big-outputs');
    for (let i = 1; i <= 3; i++) {
      const result = await second.step('run_bash', { command: `test ${i}` }, () => assert.fail('replayed steps do not run'), { intent: true });
      assert.deepEqual(result, { output: output(i) }, `step ${i} handed back whole`);
    }
    assert.equal(await second.step('note', { i: 4 }, () => assert.fail('replayed')), 'small');
    assert.deepEqual(second.stats, { replayed: 4, live: 0 });
    second.close();

    const third = await openIn(store, 'big-outputs');
    await third.step('run_bash', { command: 'test 1' }, () => assert.fail('replayed'), { intent: true });
    await assert.rejects(
      third.step('run_bash', { command: 'test 2, changed' }, () => assert.fail('a divergence runs nothing'), { intent: true }),
      (error: unknown) => error instanceof DivergenceError && error.data.position === 2 && error.data.differences.some((d) => d.includes('"command"')),
    );
    third.close();
  });

  it('identifies a step by its canonical input: the same keys in another order replay', async () => {
    const store = new MemoryJournalStore();
    const first = await openIn(store, 'canonical');
    await first.step('search', { pattern: 'TODO', path: 'src', options: { a: 1, b: [1, { y: 2, x: 1 }] } }, () => 'found');
    first.close();
    const second = await openIn(store, 'canonical');
    let called = false;
    const value = await second.step('search', { options: { b: [1, { x: 1, y: 2 }], a: 1 }, path: 'src', pattern: 'TODO' }, () => {
      called = true;
      return 'again';
    });
    second.close();
    assert.equal(value, 'found');
    assert.equal(called, false);
  });
});

describe('steps that fail', () => {
  it('a step whose function throws records no result and leaves its position to the retry, so the run stays readable', async () => {
    const store = new MemoryJournalStore();
    const journal = await openIn(store, 'retry');
    await journal.step('work', { i: 1 }, () => 1);
    let attempts = 0;
    const flaky = () => {
      attempts++;
      if (attempts === 1) throw new Error('network down');
      return 2;
    };
    await assert.rejects(journal.step('fetch', { url: 'x' }, flaky), /network down/);
    assert.equal(await journal.step('fetch', { url: 'x' }, flaky), 2);
    await journal.step('work', { i: 3 }, () => 3);
    journal.close();

    const again = await openIn(store, 'retry'); // a hole at step 2 would make this throw CorruptEntryError
    const values = [await again.step('work', { i: 1 }, () => -1), await again.step('fetch', { url: 'x' }, () => -1), await again.step('work', { i: 3 }, () => -1)];
    again.close();
    assert.deepEqual(values, [1, 2, 3]);
    assert.deepEqual(
      (await readRunEntries(store, 'retry')).map((e) => `${e.step} ${e.kind}`),
      ['1 work', '2 fetch', '3 work'],
    );
  });

  it('a step whose journal write fails can be retried in the same process, and the run stays readable', async () => {
    let failNext = false;
    const store = new MemoryJournalStore({ faultPoint: (name) => {
        if (name === 'after-objects' && failNext) {
          failNext = false;
          throw new Error('disk full');
        }
      } });
    const journal = await openIn(store, 'write-fails');
    await journal.step('work', { i: 1 }, () => 1);
    failNext = true;
    await assert.rejects(journal.step('work', { i: 2 }, () => 2), /disk full/);
    assert.equal(await journal.step('work', { i: 2 }, () => 2), 2);
    journal.close();
    const again = await openIn(store, 'write-fails');
    assert.equal(await again.step('work', { i: 1 }, () => -1), 1);
    assert.equal(await again.step('work', { i: 2 }, () => -1), 2);
    again.close();
  });

  it("when a run's very first write fails, the retry still records run.json with the task and attempt", async () => {
    let failNext = true;
    const store = new MemoryJournalStore({ faultPoint: (name: FaultPoint) => {
        if (name === 'before-objects' && failNext) {
          failNext = false;
          throw new Error('disk full');
        }
      } });
    const journal = await openIn(store, 'first-write-fails');
    await assert.rejects(journal.step('work', { i: 1 }, () => 1), /disk full/);
    assert.equal(await journal.step('work', { i: 1 }, () => 1), 1);
    journal.close();
    const record = await readRunRecord(store, 'first-write-fails');
    assert.ok(record, 'run.json is on the branch');
    assert.equal(record.task, 'task of first-write-fails');
    assert.deepEqual(record.attempts.map((a) => a.number), [1]);
  });

  it('finish("failed") records the error in run.json', async () => {
    const store = new MemoryJournalStore();
    const journal = await openIn(store, 'fails');
    await journal.step('work', { i: 1 }, () => 1);
    await journal.finish('failed', { error: 'the model is unreachable' });
    journal.close();
    const record = (await readRunRecord(store, 'fails'))!;
    assert.equal(record.status, 'failed');
    assert.equal(record.error, 'the model is unreachable');
    assert.equal((await store.log())[0]!.message.split('\n')[0], 'fails failed: the model is unreachable');
  });
});

describe('bad ids', () => {
  it('refuses run ids and step kinds that cannot be file names, with a UsageError', async () => {
    const store = new MemoryJournalStore();
    for (const run of ['', '../x', 'a/b', 'x.lock', '-dash', 'a b']) {
      await assert.rejects(openIn(store, run), (error: unknown) => error instanceof UsageError && /not a valid run id/.test(error.message), run);
    }
    const journal = await openIn(store, 'kinds');
    await assert.rejects(journal.step('no/slash', {}, () => 1), (error: unknown) => error instanceof UsageError && /not a valid step kind/.test(error.message));
    assert.equal(await journal.step('fine_kind', {}, () => 1), 1, 'a refused kind used no position');
    journal.close();
    assert.deepEqual(await stepFiles(store, 'kinds'), ['runs/kinds/steps/000/000001-fine_kind.json']);
  });
});

describe('options step() does not know', () => {
  it('a step given an option step() does not know (gate, renamed decline) is refused before it runs, and takes no position', async () => {
    const store = new MemoryJournalStore();
    const journal = await openIn(store, 'unknown-option');
    let ran = 0;
    const gated = { gate: () => ({ result: 'held back' }) } as unknown as Parameters<typeof journal.step>[3];
    await assert.rejects(
      journal.step('run_bash', { command: 'rm -rf build' }, () => ++ran, gated),
      (error: unknown) => error instanceof UsageError && /does not know the option "gate"/.test(error.message) && /decline/.test(error.message),
    );
    assert.equal(ran, 0, 'the step did not run');
    assert.equal(await journal.step('work', {}, () => 'ok'), 'ok', 'the next step takes the first position');
    journal.close();
    assert.deepEqual(await stepFiles(store, 'unknown-option'), ['runs/unknown-option/steps/000/000001-work.json']);
  });
});

// What a run records when it is created, given top-down: openRun reads the run (new or not), the
// caller makes what it needs and pins it; nothing is asked of the caller while the run opens.
describe('opening a run, then pinning what it records', () => {
  const config: RunConfig = { model: 'claude-test', system: 'be brief', tools: [], maxTokens: 100, compaction: { enabled: true, at: 0.8, contextWindow: 200_000 } };

  it('a new run says so, and records the prompt, configuration and start checkpoint handed down; opened again, it shows its record', async () => {
    const store = new MemoryJournalStore({ local: { headCommit: 'a'.repeat(40) } });
    const opening = await openRun(store, { run: 'pinned', task: 'the task', model: 'claude-test' });
    assert.equal(opening.isNew, true);
    assert.equal(opening.record, undefined);
    const start = 'b'.repeat(40);
    const journal = await opening.pin({ prompt: 'the task, expanded', config, startCheckpoint: start });
    assert.equal(store.local.keptTrees.get('pinned'), start, 'the start checkpoint is kept from a gc until a step records it');
    assert.equal(journal.record.prompt, 'the task, expanded');
    assert.deepEqual(journal.config, config);
    await journal.step('work', {}, () => 1);
    journal.close();
    const record = (await readRunRecord(store, 'pinned'))!;
    assert.equal(record.prompt, 'the task, expanded');
    assert.equal(record.startCheckpoint, start);
    assert.deepEqual(record.config, config);

    const again = await openRun(store, { run: 'pinned', task: 'the task', model: 'claude-test' });
    assert.equal(again.isNew, false);
    assert.equal(again.record?.prompt, 'the task, expanded');
    const reopened = await again.pin({ config: { ...config, system: 'another' } });
    assert.deepEqual(reopened.config, config, "the run's recorded configuration wins");
    assert.equal(await reopened.step('work', {}, () => assert.fail('a replayed step ran')), 1);
    reopened.close();
  });

  it('holds the run while its caller makes what it records; release gives it up, pinned once only', async () => {
    const store = new MemoryJournalStore();
    const opening = await openRun(store, { run: 'given-up', model: 'claude-test' });
    await assert.rejects(openRun(store, { run: 'given-up' }), (error: Error & { code?: string }) => error.code === 'ERUNLOCKED');
    opening.release();
    await assert.rejects(opening.pin({}), /pinned or released already/);
    const next = await openRun(store, { run: 'given-up' });
    assert.equal(next.isNew, true, 'nothing was written for the run given up');
    (await next.pin({})).close();
  });
});

describe("a step's checkpoint, taken by the checkpointer the run was opened with", () => {
  it("a step asking for one gets the checkpointer's tree, of the files handed down with it (named live), none without a checkpointer", async () => {
    const store = new MemoryJournalStore();
    const taken: Array<readonly string[] | undefined> = [];
    const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
    const checkpointer = { take: (paths?: readonly string[]) => (taken.push(paths), { tree, skipped: [] }) };
    const first = await openRun(store, { run: 'checkpointed', checkpointer });
    const journal = await first.pin({});
    // The caller names the files while the step is live (here, in its effect): data the valve reads, nothing it calls.
    const changed: { paths?: readonly string[] } = {};
    await journal.step('edit_file', { path: 'src/a.js' }, () => ((changed.paths = ['src/a.js']), 'edited'), { checkpoint: true, changed });
    await journal.step('run_bash', { command: 'make' }, () => 'made', { checkpoint: true, changed: {} });
    await journal.step('read_file', { path: 'src/a.js' }, () => 'read');
    journal.close();
    assert.deepEqual(taken, [['src/a.js'], undefined], 'an edit names its file; a command, the whole tree; a read, none');
    assert.deepEqual((await readRunEntries(store, 'checkpointed')).map((e) => e.checkpoint ?? null), [tree, tree, null]);

    const replay = await openRunJournal(store, { run: 'checkpointed', checkpointer });
    const unnamed: { paths?: readonly string[] } = {};
    await replay.step('edit_file', { path: 'src/a.js' }, () => assert.fail('ran'), { checkpoint: true, changed: unnamed });
    replay.close();
    assert.equal(unnamed.paths, undefined, 'a replayed step names no file');
    assert.equal(taken.length, 2, 'a replayed step takes no checkpoint');

    const bare = await openRunJournal(store, { run: 'no-checkpointer' });
    await bare.step('run_bash', { command: 'make' }, () => 'made', { checkpoint: true });
    bare.close();
    assert.equal((await readRunEntries(store, 'no-checkpointer'))[0]?.checkpoint, undefined);
  });
});
