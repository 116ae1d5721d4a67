// The agent loop on the in-memory journal store, in this process: the scripted model, a tool of the
// test's own (no files, no commands), the valve on MemoryJournalStore. A run goes to its final
// answer; the identical run replays it asking the model nothing and running no tool; a run stopped
// by an error in the middle (as a kill would stop it) goes on from its journal when run again,
// running live only what was not recorded, and the model sees the same conversation either way; a
// run killed inside a tool call finds it in flight (its intent recorded, no result) and tells the
// model the truth instead of running it again; a different task at a recorded run is a divergence.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAgent } from '../../src/agent/loop.js';
import { DivergenceError } from '../../src/errors/index.js';
import type { RunConfig } from '../../src/journal/entry.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { createScriptedProvider } from '../../src/model/scripted.js';
import type { ModelProvider, ModelRequest } from '../../src/model/types.js';
import type { AnyTool } from '../../src/tools/types.js';
import { openRunJournal } from '../../src/valve/open-journal.js';

const TURNS = [
  { text: 'Counting.', tools: [{ name: 'count', input: { by: 1 } }] },
  { text: 'Again.', tools: [{ name: 'count', input: { by: 2 } }, { name: 'count', input: { by: 3 } }] },
  { text: 'Once more.', tools: [{ name: 'count', input: { by: 4 } }] },
  { text: 'The count is 10.' },
];

// A tool that adds to a counter held by the test: its calls are the live ones. A call by `hang.by`
// tells `hang.entered` and never returns (the process running it dies there).
function countTool(calls: number[], hang?: { by: number; entered: () => void }): AnyTool {
  let total = 0;
  return {
    name: 'count',
    description: 'Adds to a counter.',
    inputSchema: { type: 'object', properties: { by: { type: 'number' } }, required: ['by'] },
    isRepeatSafe: () => false,
    needsApproval: () => false,
    mayChangeFiles: () => false,
    describe: (input: { by: number }) => `count by ${input.by}`,
    async execute(input: { by: number }) {
      calls.push(input.by);
      if (input.by === hang?.by) return (hang.entered(), new Promise<never>(() => {}));
      total += input.by;
      return { output: `total ${total}`, isError: false, summary: `+${input.by}` };
    },
  };
}

// One process's run of the task: `failAtRequest` stops it with an error at that model request;
// `hangAt` kills it inside the tool call by that much (it resolves once the call was entered:
// what was written stays, the lock goes with the process, the loop never ends).
async function runOnce(store: MemoryJournalStore, calls: number[], options: { failAtRequest?: number; task?: string; hangAt?: number } = {}) {
  const task = options.task ?? 'count to ten';
  let entered!: () => void;
  const died = new Promise<void>((resolve) => (entered = resolve));
  const tools = [countTool(calls, options.hangAt === undefined ? undefined : { by: options.hangAt, entered })];
  const config: RunConfig = { model: 'scripted', system: 'test', tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: { ...t.inputSchema } })), maxTokens: 1000, compaction: { enabled: false, at: 0.8, contextWindow: 200_000 } };
  const requests: ModelRequest[] = [];
  const scripted = createScriptedProvider({ turns: TURNS });
  const provider: ModelProvider = {
    ...scripted,
    complete: (request, completeOptions) => {
      requests.push(structuredClone(request));
      if (requests.length === options.failAtRequest) throw new Error('stopped here, as a kill would');
      return scripted.complete(request, completeOptions);
    },
  };
  const journal = await openRunJournal(store, { run: 'count', task, model: 'scripted', config });
  try {
    const running = runAgent({ journal, task, config, provider: () => provider, tools });
    const outcome = await (options.hangAt === undefined
      ? running
      : Promise.race([died.then(() => undefined), running.then(() => assert.fail('the run ended without entering the call'))]));
    return { outcome, requests, stats: journal.stats };
  } finally {
    journal.close();
  }
}

describe('the agent loop on the in-memory store', () => {
  test('runs to its final answer, and the identical run replays it asking nothing and running nothing', async () => {
    const store = new MemoryJournalStore();
    const calls: number[] = [];
    const first = await runOnce(store, calls);
    assert.equal(first.outcome!.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4]);
    assert.equal(first.requests.length, 4);
    const entries = await readRunEntries(store, 'count');
    assert.deepEqual(entries.filter((e) => e.phase === 'result').map((e) => e.kind), ['model', 'count', 'model', 'count', 'count', 'model', 'count', 'model']);

    const replayed = await runOnce(store, calls);
    assert.equal(replayed.outcome!.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4], 'no tool ran again');
    assert.equal(replayed.requests.length, 0, 'the model was asked nothing');
    assert.deepEqual(replayed.stats, { replayed: 8, live: 0 });
  });

  test('a run stopped in the middle goes on from its journal: only what was not recorded runs live', async () => {
    const store = new MemoryJournalStore();
    const calls: number[] = [];
    await assert.rejects(runOnce(store, calls, { failAtRequest: 3 }), /stopped here/);
    assert.deepEqual(calls, [1, 2, 3], 'the calls of the first two answers ran');
    const again = await runOnce(store, calls);
    assert.equal(again.outcome!.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4], 'each call ran once over both processes');
    assert.deepEqual(again.stats, { replayed: 5, live: 3 });
    // The model's first live request of the second process is the one the first never got answered.
    assert.equal(again.requests.length, 2);
    const uninterrupted = await runOnce(new MemoryJournalStore(), []);
    assert.deepEqual(again.requests[0], uninterrupted.requests[2], 'the same conversation as a run never stopped');
  });

  test('a run killed inside a tool call finds it in flight: the model is told its outcome is unknown, and it is not run again', async () => {
    const store = new MemoryJournalStore();
    const calls: number[] = [];
    await runOnce(store, calls, { hangAt: 4 });
    assert.deepEqual(calls, [1, 2, 3, 4]);
    // As the store holds it: the call's intent, no result.
    const last = (await readRunEntries(store, 'count')).at(-1)!;
    assert.deepEqual([last.kind, last.phase, last.input], ['count', 'intent', { by: 4 }]);

    const again = await runOnce(store, calls);
    assert.equal(again.outcome!.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4], 'the call in flight was not run again');
    assert.deepEqual(again.stats, { replayed: 6, live: 2 }, 'the answer standing for the call in flight, and the last model call');
    const result = (await readRunEntries(store, 'count')).find((e) => e.kind === 'count' && e.phase === 'result' && (e.input as { by: number }).by === 4)!;
    assert.equal(result.resolution, 'in-flight-reported');
    // The model's one live request carries that answer as the call's result.
    assert.equal(again.requests.length, 1);
    const told = JSON.stringify(again.requests[0]!.messages.at(-1));
    assert.match(told, /the process running it was stopped before its result was recorded/);
    assert.match(told, /It was not run again/);
  });

  test('a different task at a recorded run is a divergence at its first step: nothing is asked or run', async () => {
    const store = new MemoryJournalStore();
    const calls: number[] = [];
    await runOnce(store, calls);
    const tip = store.tip;
    await assert.rejects(runOnce(store, calls, { task: 'count to twenty' }), (error: unknown) => error instanceof DivergenceError && error.code === 'EDIVERGED' && error.data.position === 1);
    assert.deepEqual(calls, [1, 2, 3, 4], 'no tool ran');
    assert.equal(store.tip, tip, 'nothing was written');
  });
});
