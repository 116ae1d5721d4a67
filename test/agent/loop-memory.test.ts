// The agent loop on the in-memory journal store, in this process: the scripted model, a tool of the
// test's own (no files, no commands), the valve on MemoryJournalStore. A run goes to its final
// answer; the identical run replays it asking the model nothing and running no tool; a run stopped
// by an error in the middle (as a kill would stop it) goes on from its journal when run again,
// running live only what was not recorded, and the model sees the same conversation either way.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAgent } from '../../src/agent/loop.js';
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

// A tool that adds to a counter held by the test: its calls are the live ones.
function countTool(calls: number[]): AnyTool {
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
      total += input.by;
      return { output: `total ${total}`, isError: false, summary: `+${input.by}` };
    },
  };
}

async function runOnce(store: MemoryJournalStore, calls: number[], options: { failAtRequest?: number } = {}) {
  const tools = [countTool(calls)];
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
  const journal = await openRunJournal(store, { run: 'count', task: 'count to ten', model: 'scripted', config });
  try {
    const outcome = await runAgent({ journal, task: 'count to ten', config, provider: () => provider, tools });
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
    assert.equal(first.outcome.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4]);
    assert.equal(first.requests.length, 4);
    const entries = await readRunEntries(store, 'count');
    assert.deepEqual(entries.filter((e) => e.phase === 'result').map((e) => e.kind), ['model', 'count', 'model', 'count', 'count', 'model', 'count', 'model']);

    const replayed = await runOnce(store, calls);
    assert.equal(replayed.outcome.final, 'The count is 10.');
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
    assert.equal(again.outcome.final, 'The count is 10.');
    assert.deepEqual(calls, [1, 2, 3, 4], 'each call ran once over both processes');
    assert.deepEqual(again.stats, { replayed: 5, live: 3 });
    // The model's first live request of the second process is the one the first never got answered.
    assert.equal(again.requests.length, 2);
    const uninterrupted = await runOnce(new MemoryJournalStore(), []);
    assert.deepEqual(again.requests[0], uninterrupted.requests[2], 'the same conversation as a run never stopped');
  });
});
