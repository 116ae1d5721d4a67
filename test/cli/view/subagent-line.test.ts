// A subagent's steps on the parent's terminal: one indented line per finished step under the task
// step that started it, named by its description; in JSON Lines, the step without its whole result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subagentJson, subagentLine } from '../../../src/cli/view/subagent-line.js';

const event = (step: Record<string, unknown>) => ({ type: 'subagent', run: 'p-1a2b~task3', parentStep: 3, description: 'find   the uses', event: step }) as never;

test('each kind of finished step is one line, labelled and under its parent step', () => {
  assert.equal(subagentLine(event({ type: 'replayed', position: 2, description: 'read_file a.ts', summary: '3 lines' }), 120), '  [#3 find the uses] #2 REPLAYED read_file a.ts -> 3 lines');
  assert.match(subagentLine(event({ type: 'recorded', position: 4, description: 'run_bash "ls"', summary: 'exit 0', durationMs: 1200 }), 120)!, /^ {2}\[#3 find the uses\] #4 LIVE run_bash "ls" -> exit 0 \(1\.2 s\)$/);
  assert.match(subagentLine(event({ type: 'recorded', position: 4, description: 'd', summary: 's', durationMs: 5, resolution: 'in-flight-reported' }), 120)!, /#4 NOT RUN d/);
  assert.equal(subagentLine(event({ type: 'in-flight', position: 5, description: 'run_bash "x"', decision: 'rerun' }), 120), '  [#3 find the uses] #5 in flight at a crash: run_bash "x" (running it again)');
  assert.equal(subagentLine(event({ type: 'orphan', description: 'npm run dev' }), 120), '  [#3 find the uses] a command left running by the killed attempt was stopped: npm run dev');
  assert.equal(subagentLine(event({ type: 'started', position: 6 }), 120), undefined);
});

test('a line fits the width (20 columns at least) and shows control characters', () => {
  const line = subagentLine(event({ type: 'replayed', position: 2, description: 'x'.repeat(200), summary: '\x1b[2J' }), 60)!;
  assert.ok(line.length <= 60, line);
  assert.ok(subagentLine(event({ type: 'replayed', position: 2, description: 'x'.repeat(200), summary: 's' }), 5)!.length <= 20);
  assert.doesNotMatch(subagentLine(event({ type: 'replayed', position: 2, description: 'd', summary: '\x1b[2J' }), 200)!, /\x1b/);
});

test('JSON Lines: who and the step, without its result; a start or an orphan is no event', () => {
  assert.deepEqual(subagentJson(event({ type: 'recorded', position: 4, description: 'd', summary: 's', result: { output: 'huge' } })), { run: 'p-1a2b~task3', parentStep: 3, description: 'find   the uses', step: { type: 'recorded', position: 4, description: 'd', summary: 's' } });
  assert.equal(subagentJson(event({ type: 'started', position: 1 })), undefined);
  assert.equal(subagentJson(event({ type: 'orphan', description: 'x' })), undefined);
});
