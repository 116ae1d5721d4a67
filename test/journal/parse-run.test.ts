// A run.json read back from the branch: what savepoint writes parses as it was, and each field a
// command uses (ids handed to git, names and texts printed, counts) is refused with
// CorruptEntryError naming the file when it is not what savepoint wrote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptEntryError } from '../../src/errors/index.js';
import { RUN_FORMAT, serializeEntry, type RunRecord } from '../../src/journal/entry.js';
import { parseRunRecord } from '../../src/journal/parse-run.js';

const PATH = 'runs/fix-1a2b/run.json';
const record: RunRecord = {
  format: RUN_FORMAT,
  id: 'fix-1a2b',
  task: 'fix the tests',
  model: 'claude-sonnet-4-5',
  baseCommit: 'b'.repeat(40),
  worktree: '/home/me/project',
  branch: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:05:00.000Z',
  status: 'finished',
  lineage: { forkedFrom: 'fix-0000', atStep: 4 },
  startCheckpoint: 'c'.repeat(40),
  attempts: [
    { number: 1, startedAt: '2026-01-01T00:00:00.000Z', host: 'laptop', pid: 4242, firstLiveStep: 1, sandbox: { kind: 'bwrap', network: false }, killed: { noticedAt: '2026-01-01T00:01:00.000Z', noticedBy: 2 } },
    { number: 2, startedAt: '2026-01-01T00:01:00.000Z', host: 'laptop', pid: 4343, firstLiveStep: 9, end: { how: 'finished', at: '2026-01-01T00:05:00.000Z', head: 'd'.repeat(40) } },
  ],
  final: 'All tests pass.',
  totals: { files: 30, lastStep: 15, modelCalls: 6, tokens: { input: 100, output: 20, cacheCreation: 0, cacheRead: 50 }, lastActivity: '2026-01-01T00:05:00.000Z', inFlight: false },
} as RunRecord;

// The reason CorruptEntryError gives for run.json with `changed` (undefined: accepted).
function refusal(changed: Record<string, unknown>, path = PATH): string | undefined {
  try {
    parseRunRecord(JSON.stringify({ ...record, ...changed }), path);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof CorruptEntryError, String(error));
    assert.equal(error.data.path, path);
    return error.data.reason;
  }
}

describe('run.json read back', () => {
  it('parses what savepoint writes as it was, a subagent\'s and a follow-up\'s lineage too', () => {
    assert.deepEqual(parseRunRecord(serializeEntry(record), PATH), record);
    assert.equal(refusal({ lineage: { parentRun: 'fix-0000', parentStep: 3, description: 'look around' } }), undefined);
    assert.equal(refusal({ lineage: { previousRun: 'fix-0000' } }), undefined);
    assert.equal(refusal({}, 'somewhere/else.json'), undefined, 'a run.json read outside runs/<id>/ is not held to its folder');
  });

  it('refuses what is not a run record of this format, or sits under another run', () => {
    assert.throws(() => parseRunRecord('{', PATH), /not valid JSON/);
    assert.match(refusal({ format: 'savepoint/run@0' }) ?? '', /its format is "savepoint\/run@0"/);
    assert.match(refusal({ task: undefined }) ?? '', /its id or task is missing/);
    assert.match(refusal({ status: 'paused' }) ?? '', /its status "paused" is unknown/);
    assert.match(refusal({ attempts: undefined }) ?? '', /attempts list is missing/);
    assert.match(refusal({ id: '../x' }, 'elsewhere.json') ?? '', /is not a run id/);
    assert.match(refusal({ id: 'other-run' }) ?? '', /names run "other-run" but sits under run fix-1a2b/);
  });

  it('refuses each field a command would hand to git, print or count with when it is not what savepoint wrote', () => {
    const attempt = record.attempts[0]!;
    const reasons: Array<[Record<string, unknown>, RegExp]> = [
      [{ prompt: 3 }, /prompt is not text/],
      [{ baseCommit: '--output=/tmp/x' }, /baseCommit is not an object id/],
      [{ startCheckpoint: 'HEAD~1' }, /startCheckpoint is not an object id/],
      [{ branch: 7 }, /branch is not a string/],
      [{ model: 'm'.repeat(5000) }, /model is 5000 characters long/],
      [{ refused: 'yes' }, /refused mark is not true or false/],
      [{ lineage: 'fork' }, /lineage is not an object/],
      [{ lineage: { forkedFrom: 'a/b', atStep: 1 } }, /lineage does not name a run id/],
      [{ lineage: { forkedFrom: 'a', atStep: -1 } }, /atStep is not a whole number/],
      [{ lineage: { parentRun: 'p', parentStep: 1.5, description: 'd' } }, /parentStep is not a whole number/],
      [{ lineage: { previousRun: '' } }, /lineage does not name a run id/],
      [{ attempts: [null] }, /not an object/],
      [{ attempts: [{ ...attempt, pid: '4242' }] }, /pid is not a whole number/],
      [{ attempts: [{ ...attempt, host: undefined }] }, /host is missing/],
      [{ attempts: [{ ...attempt, killed: { noticedAt: 'now', noticedBy: 'me' } }] }, /noticedBy is not a whole number/],
      [{ attempts: [{ ...attempt, sandbox: { kind: 'docker' } }] }, /sandbox kind "docker" is unknown/],
      [{ attempts: [{ ...attempt, end: { how: 'vanished', at: 'now' } }] }, /has an end that is not one of finished, limit, interrupted, failed/],
      [{ attempts: [{ ...attempt, end: { how: 'failed', at: 'now', error: {} } }] }, /error or limit that is not text/],
      [{ attempts: [{ ...attempt, end: { how: 'finished', at: 'now', head: 'main' } }] }, /head is not an object id/],
      [{ sandbox: { kind: 'none', network: 'on' } }, /network is not true or false/],
      [{ totals: [] }, /totals are not an object/],
      [{ totals: { ...record.totals, lastStep: 1.5 } }, /lastStep is not a whole number/],
      [{ totals: { ...record.totals, tokens: undefined } }, /totals lack the tokens/],
      [{ totals: { ...record.totals, inFlight: 1 } }, /inFlight is not true or false/],
      [{ config: null }, /config is not an object/],
      [{ config: { model: 'm', system: 's', tools: [], maxTokens: 8 } }, /config lacks the compaction settings/],
      [{ config: { model: 'm', tools: [], maxTokens: 8, compaction: {} } }, /config lacks the model, system prompt, tools or max tokens/],
    ];
    for (const [changed, reason] of reasons) assert.match(refusal(changed) ?? 'accepted', reason, JSON.stringify(changed).slice(0, 100));
  });
});
