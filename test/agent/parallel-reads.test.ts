// One answer's reads run at the same time, through the loop with the scripted model in this
// process: two reads overlap (the first waits, inside its read, for the second to start and to
// finish), their results go back in call order, each its own step numbered in call order, and the
// identical run replays them in that order with nothing run again. A call that is not a read
// (a write) runs alone: after every call before it, before every call after it. The tools are the
// real ones on a real folder; the journal is the in-memory store.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAgent } from '../../src/agent/loop.js';
import type { RunConfig } from '../../src/journal/entry.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { createScriptedProvider } from '../../src/model/scripted.js';
import type { ModelRequest } from '../../src/model/types.js';
import { createTools } from '../../src/tools/index.js';
import type { AnyTool } from '../../src/tools/types.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

const read = (path: string) => ({ name: 'read_file', input: { path } });
const TURNS = [
  { text: 'Reading both.', tools: [read('a.txt'), read('b.txt')] },
  { text: 'Two reads, a write between two more.', tools: [read('a.txt'), read('b.txt'), { name: 'write_file', input: { path: 'c.txt', content: 'c\n' } }, read('c.txt')] },
  { text: 'Done.' },
];

// A signal that a test awaits and a tool gives.
function signal(): { promise: Promise<void>; give: () => void } {
  let give!: () => void;
  const promise = new Promise<void>((resolve) => (give = resolve));
  return { promise, give };
}

// The real tools, each call noting when it starts and ends; the first read of turn 1 (a.txt) waits,
// inside its read, until the second (b.txt) has started and finished: only reads that run at the
// same time get past it (one after another, it would wait for ever; the test's timeout says so).
function observedTools(root: string, events: string[], live: boolean): AnyTool[] {
  const bStarted = signal();
  const bEnded = signal();
  let held = false;
  return createTools(root).map((tool) => ({
    ...tool,
    async execute(input, context) {
      if (!live) assert.fail(`${tool.name} ran on replay`);
      const what = `${tool.name} ${String((input as { path?: string }).path)}`;
      events.push(`start ${what}`);
      if (what === 'read_file a.txt' && !held) {
        held = true;
        await bStarted.promise;
        await bEnded.promise;
      }
      const result = await tool.execute(input, context);
      events.push(`end ${what}`);
      if (what === 'read_file b.txt') {
        bStarted.give();
        bEnded.give();
      }
      return result;
    },
  }));
}

async function runOnce(store: MemoryJournalStore, root: string, run: string, events: string[], live: boolean) {
  const tools = observedTools(root, events, live);
  const config: RunConfig = { model: 'scripted', system: 'test', tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: { ...t.inputSchema } })), maxTokens: 1000, compaction: { enabled: false, at: 0.8, contextWindow: 200_000 } };
  const requests: ModelRequest[] = [];
  const scripted = createScriptedProvider({ turns: TURNS });
  const provider = { ...scripted, complete: (request: ModelRequest, options?: Parameters<typeof scripted.complete>[1]) => (requests.push(structuredClone(request)), scripted.complete(request, options)) };
  const journal = await openRunJournal(store, { run, task: 'read them', model: 'scripted', config });
  try {
    const outcome = await runAgent({ journal, task: 'read them', config, provider: () => provider, tools });
    return { outcome, requests, stats: journal.stats };
  } finally {
    journal.close();
  }
}

describe("one answer's reads", () => {
  test('run at the same time, go back in call order each its own step, and replay identically; a write runs alone', { timeout: 60_000 }, async () => {
    const repo = await scratch.repo({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
    const store = new MemoryJournalStore();
    const events: string[] = [];
    const first = await runOnce(store, repo.root, 'reads', events, true);
    assert.equal(first.outcome.final, 'Done.');
    // Turn 1: b started and ended while a was running (a started first: it took its step first).
    assert.deepEqual(events.slice(0, 4), ['start read_file a.txt', 'start read_file b.txt', 'end read_file b.txt', 'end read_file a.txt']);
    // Turn 2: the two reads, then the write alone, then the read after it.
    const second = events.slice(4);
    const at = (event: string) => second.indexOf(event);
    assert.ok(at('start write_file c.txt') > at('end read_file a.txt') && at('start write_file c.txt') > at('end read_file b.txt'), `the write waits for the reads before it: ${second.join(', ')}`);
    assert.ok(at('start read_file c.txt') > at('end write_file c.txt'), `the read after the write waits for it: ${second.join(', ')}`);

    // The model got the results in the order of its calls, whatever order they finished in.
    const results = first.requests[1]!.messages.at(-1)!.content as Array<{ type: string; tool_use_id: string; content: string }>;
    assert.deepEqual(results.map((r) => r.tool_use_id), ['toolu_s0_0', 'toolu_s0_1']);
    assert.match(results[0]!.content, /alpha/);
    assert.match(results[1]!.content, /beta/);

    // Each call its own step, numbered in call order; b's result landed before a's.
    const entries = await readRunEntries(store, 'reads');
    const subjects = (await store.log()).map((c) => c.message.split('\n')[0]!).reverse();
    assert.deepEqual(subjects.slice(0, 3).map((s) => /^reads (#\d+ \S+)/.exec(s)?.[1]), ['#1 model', '#3 read_file', '#2 read_file'], 'the journal holds them in the order they finished');
    assert.deepEqual(entries.find((e) => e.step === 2)?.batch, [2, 3]);
    assert.deepEqual(entries.find((e) => e.step === 5)?.batch, [5, 6], 'the reads before the write are one batch');
    assert.equal(entries.find((e) => e.step === 7)?.batch, undefined, 'the write ran alone');
    assert.equal(entries.find((e) => e.step === 8)?.batch, undefined, 'as did the read after it');

    // The identical run replays every step in order, runs nothing and asks the model nothing.
    const replayed = await runOnce(store, repo.root, 'reads', [], false);
    assert.equal(replayed.outcome.final, 'Done.');
    assert.deepEqual(replayed.stats, { replayed: entries.filter((e) => e.phase === 'result').length, live: 0 });
    assert.equal(replayed.requests.length, 0);
  });
});
