// Builds the long runs the session benchmark (bench/session.ts) measures: a finished run of about
// N steps, written in process through the library by a provider that answers at once (a read_file
// call per turn, a summary when the loop compacts, a final answer at the end), with a 40,000-token
// context window so the conversation compacts as a day-long session's does.
//
// The build runs in a child process of its own (this file, started with `--stage`), with fsync
// made a no-op in that process only. What is measured afterwards is the CLI reading the journal,
// not the build; the built journal never meets a power cut (its files are in the page cache when
// the CLI reads them), so its fsyncs would only cost time. In a CPU profile of a 2,000-step build
// (load 12, 14 ms a step, flat in the run's length) fsync was the largest single item, 4 of 30 s,
// with rename and open after it and 10 s idle waiting on the thread pool's fsyncs; with fsync off
// the build measured 11-15 ms a step at that load, within its noise, as the per-step packs'
// renames and opens and the CPU stay shared with other work. In its own process the patch cannot
// leak into another group of `npm run bench`, which load the library in the bench's own process
// and must keep every fsync; the child also starts with a heap of its own.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCompactionRequest } from '../src/model/compaction.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../src/model/types.js';
import { runStageInChild } from './lib.js';

const SELF = fileURLToPath(import.meta.url);
/** The model named in the built runs, and in the requests of the sessions opened on them. */
export const BUILD_MODEL = 'claude-sonnet-4-5';
/** The built runs' task. */
export const BUILD_TASK = 'benchmark: a long session, turn after turn';
const CONTEXT_WINDOW = 40_000;
/** The file each turn of a built run reads (two short lines). */
export const NOTES = 'line one of the notes\nline two of the notes\n';

/** What a build made: the run's id, its steps, its model turns (tool calls), after which turns it compacted, and how long it took. */
export interface BuiltRun {
  run: string;
  steps: number;
  turns: number;
  compactedAfter: number[];
  ms: number;
}

// A provider that answers at once: a read_file call until `steps` is near, a summary to a compaction request, then a final answer.
function buildingProvider(steps: number, position: () => number, counts: { turns: number; compactedAfter: number[] }): ModelProvider {
  return {
    name: BUILD_MODEL,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const inputTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
      const usage = { inputTokens, outputTokens: 20, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
      if (isCompactionRequest(request.messages)) {
        counts.compactedAfter.push(counts.turns);
        return { model: BUILD_MODEL, content: [{ type: 'text', text: `Summary: ${counts.turns} documents read so far, each the same notes.` }], stopReason: 'end_turn', usage };
      }
      if (position() + 2 >= steps) return { model: BUILD_MODEL, content: [{ type: 'text', text: 'Done reading.' }], stopReason: 'end_turn', usage };
      counts.turns++;
      return {
        model: BUILD_MODEL,
        content: [{ type: 'text', text: `Reading ${counts.turns}.` }, { type: 'tool_use', id: `toolu_${counts.turns}`, name: 'read_file', input: { path: 'notes.txt' } }],
        stopReason: 'tool_use',
        usage,
      };
    },
  };
}

// fsync and fdatasync as no-ops in this process, before the library is loaded (it keeps
// references to them, promisified, at load).
function skipFsync(): void {
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  const done = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback === 'function') process.nextTick(callback as (error: null) => void, null);
  };
  fs.fsyncSync = () => {};
  fs.fdatasyncSync = () => {};
  fs.fsync = done as typeof fs.fsync;
  fs.fdatasync = done as typeof fs.fdatasync;
  syncBuiltinESMExports();
}

async function buildHere(root: string, steps: number): Promise<BuiltRun> {
  skipFsync();
  const lib = await import('../src/index.js');
  writeFileSync(join(root, 'notes.txt'), NOTES);
  let position = 0;
  const counts = { turns: 0, compactedAfter: [] as number[] };
  const started = performance.now();
  const outcome = await lib.startRun({
    dir: root,
    task: BUILD_TASK,
    model: BUILD_MODEL,
    provider: buildingProvider(steps, () => position, counts),
    sandbox: { use: false },
    contextWindow: CONTEXT_WINDOW,
    onEvent: (event) => {
      if (event.type === 'recorded') position = event.position;
    },
  });
  return { run: outcome.run, steps: outcome.steps, ...counts, ms: performance.now() - started };
}

/** A finished run of about `steps` steps in the repository `root`, built in a child process. */
export function buildRun(root: string, steps: number): Promise<BuiltRun> {
  return runStageInChild<BuiltRun>(SELF, { root, steps }, `building a ${steps}-step run`);
}

if (process.argv[1] === SELF) {
  const at = process.argv.indexOf('--stage');
  if (at < 0) throw new Error('bench/session-build.ts is a stage of bench/session.ts: run `npm run bench -- session`');
  const spec = JSON.parse(process.argv[at + 1]!) as { root: string; steps: number };
  process.stdout.write(JSON.stringify(await buildHere(spec.root, spec.steps)));
}
