// A step's entry as written and as read back: pretty JSON that parses to the same record, and every
// field of a damaged or hand-edited file refused with CorruptEntryError naming the file, the step and
// the reason, before anything replays it. Run ids and kinds become file names: only safe ones pass.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptEntryError } from '../../src/errors/index.js';
import { ENTRY_FORMAT, isSubagentLineage, isValidKind, isValidRunId, parseEntry, serializeEntry, type JournalEntry } from '../../src/journal/entry.js';

const PATH = 'runs/r/steps/000/000003-run_bash.json';
const EXPECTED = { run: 'r', step: 3, kind: 'run_bash', phase: 'result' };
const entry: JournalEntry = {
  format: ENTRY_FORMAT,
  run: 'r',
  step: 3,
  kind: 'run_bash',
  phase: 'result',
  key: 'run_bash:0123456789abcdef',
  description: 'npm test',
  input: { command: 'npm test' },
  result: { exitCode: 0, output: 'ok' },
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  durationMs: 1000,
  usage: { inputTokens: 10, outputTokens: 2 },
  checkpoint: 'a'.repeat(40),
  checkpointSkipped: [{ path: 'big.bin', size: 99_000_000, reason: 'larger than the limit' }],
  attempt: 1,
  batch: [3, 4],
};

// The reason CorruptEntryError gives for `changed` (undefined: the entry is accepted).
function refusal(changed: Record<string, unknown>, expected: Partial<typeof EXPECTED> = {}): string | undefined {
  try {
    parseEntry(JSON.stringify({ ...entry, ...changed }), PATH, { ...EXPECTED, ...expected });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof CorruptEntryError, String(error));
    assert.equal(error.code, 'ECORRUPTENTRY');
    assert.equal(error.data.path, PATH);
    assert.equal(error.data.step, 3);
    return error.data.reason;
  }
}

describe('journal entries', () => {
  it('are written as pretty JSON with a final newline and read back as they were', () => {
    const text = serializeEntry(entry);
    assert.ok(text.endsWith('}\n'));
    assert.match(text, /\n {2}"step": 3,\n/);
    assert.deepEqual(parseEntry(text, PATH, EXPECTED), entry);
    const intent: Record<string, unknown> = { ...entry, phase: 'intent' };
    delete intent.result;
    assert.equal(parseEntry(JSON.stringify(intent), PATH, { ...EXPECTED, phase: 'intent' }).phase, 'intent');
  });

  it('are refused when they are not JSON objects of this format, or sit where another run, step, kind or phase belongs', () => {
    assert.throws(() => parseEntry('{"format":', PATH, EXPECTED), (error: CorruptEntryError) => /not valid JSON/.test(error.data.reason) && error.message.includes(PATH));
    assert.throws(() => parseEntry('[1]', PATH, EXPECTED), /not a JSON object/);
    assert.match(refusal({ format: 'savepoint/entry@2' }) ?? '', /format is "savepoint\/entry@2"/);
    assert.match(refusal({}, { run: 'other' }) ?? '', /names run "r" but sits under run other/);
    assert.match(refusal({ step: 4 }) ?? '', /says step 4 but its file name says 3/);
    assert.match(refusal({ kind: 'read_file' }) ?? '', /kind "read_file"/);
    assert.match(refusal({ phase: 'intent' }) ?? '', /phase "intent"/);
  });

  it('are refused, field by field, when a value is not what savepoint wrote', () => {
    const reasons: Array<[Record<string, unknown>, RegExp]> = [
      [{ key: 'read_file:0123' }, /key is missing or malformed/],
      [{ key: `run_bash:${'x'.repeat(600)}` }, /key is missing or malformed/],
      [{ description: 7 }, /description is missing/],
      [{ description: 'x'.repeat(1024 * 1024 + 1) }, /description is 1048577 characters long/],
      [{ input: undefined }, /input is missing/],
      [{ result: undefined }, /result entry without a result/],
      [{ startedAt: undefined }, /start time is missing/],
      [{ finishedAt: 5 }, /finishedAt is not a string/],
      [{ attempt: 1.5 }, /attempt is not a whole number/],
      [{ attempt: -1 }, /attempt is not a whole number/],
      [{ durationMs: '1s' }, /duration is not a number/],
      [{ durationMs: -1 }, /durationMs is not a number from 0 up/],
      [{ checkpoint: 'HEAD' }, /checkpoint is not a tree id/],
      [{ checkpoint: '--upload-pack=x' }, /checkpoint is not a tree id/],
      [{ usage: [] }, /usage is not an object/],
      [{ usage: { inputTokens: 1 } }, /outputTokens is not a whole number/],
      [{ usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0.5 } }, /cacheReadInputTokens is not a whole number/],
      [{ checkpointSkipped: {} }, /checkpointSkipped is not a list/],
      [{ checkpointSkipped: [{ path: 'a', reason: 'r' }] }, /without a size/],
      [{ checkpointSkipped: [{ path: 'a', size: -1, reason: 'r' }] }, /size is not a number from 0 up/],
      [{ batch: [4, 5] }, /batch is not the first and last positions of a group that holds step 3/],
      [{ batch: [0, 3] }, /batch is not/],
      [{ batch: [3] }, /batch is not/],
    ];
    for (const [changed, reason] of reasons) assert.match(refusal(changed) ?? 'accepted', reason, JSON.stringify(changed).slice(0, 80));
    assert.equal(refusal({ batch: [1, 3], summary: 'short', resolution: 'declined' }), undefined);
  });

  it('take run ids and kinds that are safe as file names, and tell a subagent by its lineage', () => {
    for (const id of ['fix-tests-1a2b', 'a', 'v1.2_x', 'A'.repeat(100)]) assert.ok(isValidRunId(id), id);
    for (const id of ['', '-rf', '.hidden', 'a/b', 'a..b', 'ref.lock', 'A'.repeat(101), 'a b', 'é']) assert.ok(!isValidRunId(id), id);
    for (const kind of ['model', 'run_bash', 'mcp-x_y']) assert.ok(isValidKind(kind), kind);
    for (const kind of ['', '1model', 'a/b', 'a.b', 'k'.repeat(65)]) assert.ok(!isValidKind(kind), kind);
    assert.ok(isSubagentLineage({ parentRun: 'p', parentStep: 4, description: 'look' }));
    assert.ok(!isSubagentLineage({ forkedFrom: 'p', atStep: 4 }));
    assert.ok(!isSubagentLineage(null));
  });
});
