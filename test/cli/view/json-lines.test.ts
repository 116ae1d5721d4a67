// `--json`'s lines (src/cli/view/json-lines.ts), in this process: one JSON object a line, each with
// its type and an ISO time; each session event under its documented name with its fields (a model
// step's usage, a tool step's error flag and note, null where a step has none); an event this file
// does not know passed on with its own fields; a run's end as final, savings and summary; an error
// with its stable code; control characters from outside escaped so no terminal obeys them.
// The stream of a real run, end to end: test/cli/json-events.test.ts.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { JsonLines, JSON_EVENT_TYPES } from '../../../src/cli/view/json-lines.js';
import { RunTally } from '../../../src/cli/view/run-tally.js';
import { UnknownRunError } from '../../../src/errors/index.js';
import type { SessionEvent } from '../../../src/session/index.js';

function lines(): { json: JsonLines; read: () => Array<Record<string, unknown>>; raw: () => string } {
  let text = '';
  const out = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
  return { json: new JsonLines(out), read: () => text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>), raw: () => text };
}
const withoutTime = ({ time, ...rest }: Record<string, unknown>) => (assert.match(String(time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), rest);

test('each session event is one line under its documented name, with its fields', () => {
  const { json, read } = lines();
  const events = [
    { type: 'opened', run: 'r-1', task: 'fix it', model: 'm', recordedSteps: 0 },
    { type: 'replayed', position: 1, kind: 'model', description: 'model turn 1', summary: 'calls read_file', originalDurationMs: 40, result: { usage: { inputTokens: 10, outputTokens: 2 } } },
    { type: 'started', position: 2, kind: 'run_bash', description: 'run_bash "make"' },
    { type: 'recorded', position: 2, kind: 'run_bash', description: 'run_bash "make"', summary: 'exit 2', durationMs: 120, result: { isError: true, note: 'wrote outside the repository' } },
    { type: 'recorded', position: 3, kind: 'user', description: 'follow-up', summary: 'noted', durationMs: 0, result: 'noted', resolution: 'in-flight-reported' },
    { type: 'in-flight', position: 4, kind: 'run_bash', description: 'run_bash "deploy"', decision: 'answered', interrupted: false },
    { type: 'compaction', before: 180_000, after: 9_000 },
  ] as unknown as SessionEvent[];
  for (const event of events) json.event(event);
  assert.deepEqual(read().map(withoutTime), [
    { type: 'run-started', run: 'r-1', task: 'fix it', model: 'm', recordedSteps: 0 },
    { type: 'step-replayed', position: 1, kind: 'model', description: 'model turn 1', summary: 'calls read_file', originalDurationMs: 40, usage: { inputTokens: 10, outputTokens: 2 }, note: null },
    { type: 'step-started', position: 2, kind: 'run_bash', description: 'run_bash "make"' },
    { type: 'step-recorded', position: 2, kind: 'run_bash', description: 'run_bash "make"', summary: 'exit 2', durationMs: 120, resolution: null, isError: true, usage: null, note: 'wrote outside the repository' },
    { type: 'step-recorded', position: 3, kind: 'user', description: 'follow-up', summary: 'noted', durationMs: 0, resolution: 'in-flight-reported', isError: null, usage: null, note: null },
    { type: 'step-in-flight', position: 4, kind: 'run_bash', description: 'run_bash "deploy"', decision: 'answered', interrupted: false },
    { type: 'compaction', before: 180_000, after: 9_000 },
  ]);
  for (const line of read()) assert.ok((JSON_EVENT_TYPES as readonly string[]).includes(String(line.type)), `${String(line.type)} is a documented type`);
});

test("a run's end is final, savings and summary; a finished run says which files changed since, a stopped one does not", () => {
  const finished = lines();
  finished.json.end({ run: 'r-1', status: 'finished', final: 'Done.', steps: 3, replayed: 1, live: 2, changedSince: [{ path: 'a.txt', change: 'modified' }] }, new RunTally());
  const [final, savings, summary] = finished.read();
  assert.deepEqual(withoutTime(final!), { type: 'final', run: 'r-1', status: 'finished', final: 'Done.', steps: 3, changedSince: [{ path: 'a.txt', change: 'modified' }] });
  assert.deepEqual([savings!.type, summary!.type], ['savings', 'summary']);
  assert.equal(typeof savings!.replayedSteps, 'number');

  const stopped = lines();
  stopped.json.end({ run: 'r-2', status: 'max-steps', final: '', steps: 5, replayed: 0, live: 5 }, new RunTally());
  assert.equal('changedSince' in stopped.read()[0]!, false);
});

test('an error is one line with its stable code; control characters from outside are escaped', () => {
  const { json, read, raw } = lines();
  json.error(new UnknownRunError('nosuch'));
  json.error(new Error('something broke'));
  json.event({ type: 'started', position: 1, kind: 'run_bash', description: 'run_bash "printf \u001b[2J\u009b\u202e"' } as SessionEvent);
  const [known, unexpected, started] = read();
  assert.equal(known!.code, 'EUNKNOWNRUN');
  assert.match(String(known!.message), /nosuch/);
  assert.deepEqual([unexpected!.code, unexpected!.message], ['EUNEXPECTED', 'something broke']);
  assert.equal(started!.description, 'run_bash "printf \u001b[2J\u009b\u202e"', 'a script reads the value as it was');
  assert.doesNotMatch(raw(), /[\u001b\u009b\u202e]/, 'the terminal sees only escapes');
});
