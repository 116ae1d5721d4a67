// A step's input and result for people (`show`, the HTML page): simple inputs as `key: value` lines
// with multi-line text indented, a tool's whole output, a model's text and calls, a compaction's
// sizes and summary, and JSON for anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JournalEntry } from '../../src/journal/entry.js';
import { formatInput, formatResult, resultIsError } from '../../src/report/step-detail.js';

const entry = (kind: string, result: unknown) => ({ kind, result }) as JournalEntry;

test('an input reads as its fields, a file body as an indented block; nested or empty input as JSON', () => {
  assert.equal(formatInput({ path: 'a.ts', content: 'one\ntwo\n', append: false, n: 2 }), 'path: a.ts\ncontent:\n  one\n  two\nappend: false\nn: 2');
  assert.equal(formatInput({ edits: [{ old: 'a' }] }), '{\n  "edits": [\n    {\n      "old": "a"\n    }\n  ]\n}');
  assert.equal(formatInput({}), '{}');
  assert.equal(formatInput('text'), '"text"');
  assert.equal(formatInput(undefined), 'undefined');
});

test("a tool's result is its whole output, and whether the model was told of an error", () => {
  const long = 'x'.repeat(100_000);
  assert.equal(formatResult(entry('run_bash', { output: long, isError: true })), long);
  assert.equal(resultIsError(entry('run_bash', { output: '', isError: true })), true);
  assert.equal(resultIsError(entry('read_file', { output: '', isError: false })), false);
  assert.equal(resultIsError(entry('model', { content: [] })), null);
  assert.equal(resultIsError(entry('model', undefined)), null);
});

test("a model's answer: its text, thinking, calls with their inputs, then why it stopped", () => {
  const answer = { content: [{ type: 'thinking', thinking: 'hmm\nyes' }, { type: 'text', text: 'Reading it.' }, { type: 'redacted_thinking', data: 'x' }, { type: 'tool_use', id: 'c1', name: 'read_file', input: { path: 'a.ts' } }, { type: 'other', n: 1 }], stopReason: 'tool_use' };
  assert.equal(formatResult(entry('model', answer)), [
    '(thinking)\n  hmm\n  yes',
    'Reading it.',
    '(redacted thinking: encrypted by the API, sent back as it came)',
    '→ calls read_file (c1)\n  path: a.ts',
    '{\n  "type": "other",\n  "n": 1\n}',
    'stop reason: tool_use',
  ].join('\n\n'));
});

test("a compaction's sizes before and after, and its summary", () => {
  const text = formatResult(entry('compact', { summary: 'did A\nthen B', tokensBefore: 150000, tokensAfter: 12345, summarizedMessages: 40, keptMessages: 4 }));
  assert.equal(text, 'tokens before: 150,000\ntokens after: 12,345 (estimated)\n40 messages summarized, 4 kept whole (the journal keeps every original result)\n\nsummary:\n  did A\n  then B');
  assert.match(formatResult(entry('compact', { summary: 's' })), /^tokens before: \?\n/);
});

test('any other result is its fields, or JSON', () => {
  assert.equal(formatResult(entry('config', { model: 'claude-b' })), 'model: claude-b');
  assert.equal(formatResult(entry('user', undefined)), 'undefined');
});
