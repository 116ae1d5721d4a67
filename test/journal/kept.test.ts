// Entries as a replay holds them: bytes in shared chunks, parsed back whole when replay reaches
// them; an entry kept without its result (too big, or an intent never handed back) gives its result
// as null until its bytes are supplied again from the blob, and those are checked as when first read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptEntryError } from '../../src/errors/index.js';
import { ENTRY_FORMAT, serializeEntry, type JournalEntry } from '../../src/journal/entry.js';
import { ByteArena, expandKept, isKept, keptPath, KEPT_BYTES, supplyKept, withoutResult } from '../../src/journal/kept.js';

function entry(step: number, result: unknown, extra: Partial<JournalEntry> = {}): JournalEntry {
  return { format: ENTRY_FORMAT, run: 'r', step, kind: 'run_bash', phase: 'result', key: `run_bash:${step}`, description: 'ls', input: { command: 'ls' }, result, startedAt: '2026-01-01T00:00:00.000Z', attempt: 1, ...extra };
}
const names = { run: 'r', kind: 'run_bash' };

describe('kept entries', () => {
  it('hold an entry\'s own bytes and give the entry back whole, with what a lookup compares parsed', () => {
    const arena = new ByteArena();
    const one = entry(1, { output: 'a ✔ b' }, { batch: [1, 2] });
    const two = entry(2, { output: 'second' });
    const [kept1, kept2] = [one, two].map((e) => arena.keep(e, Buffer.from(serializeEntry(e)), names));
    assert.ok(isKept(kept1!));
    assert.ok(!isKept(one));
    assert.equal(kept1!.chunk, kept2!.chunk, 'small entries share one chunk');
    assert.deepEqual([kept1!.step, kept1!.phase, kept1!.kind, kept1!.key, kept1!.whole, kept1!.batch], [1, 'result', 'run_bash', 'run_bash:1', true, [1, 2]]);
    assert.deepEqual(expandKept(kept1!), one);
    assert.deepEqual(expandKept(kept2!), two);
    assert.equal(keptPath(kept2!), 'runs/r/steps/000/000002-run_bash.json');
  });

  it('keep an entry too big without its result, null until its bytes are supplied again and checked', () => {
    const arena = new ByteArena();
    const big = entry(3, { output: 'x'.repeat(KEPT_BYTES) });
    const kept = arena.keep(big, undefined, names, 'f'.repeat(40));
    assert.equal(kept.whole, false);
    assert.equal(kept.oid, 'f'.repeat(40));
    assert.ok(kept.length < 1024);
    assert.deepEqual(expandKept(kept), withoutResult(big));
    assert.equal(expandKept(kept).result, null);
    supplyKept(kept, Buffer.from(serializeEntry(big)));
    assert.deepEqual(expandKept(kept), big);
    supplyKept(kept, Buffer.from(serializeEntry({ ...big, step: 4 })));
    assert.throws(() => expandKept(kept), (error: unknown) => error instanceof CorruptEntryError && /says step 4/.test(error.data.reason));
  });

  it('start a chunk of its own for an entry larger than the rest of the current one', () => {
    const arena = new ByteArena();
    const small = arena.keep(entry(1, 's'), Buffer.from(serializeEntry(entry(1, 's'))), names);
    const large = entry(2, 'y'.repeat(300 * 1024));
    const kept = arena.keep(large, Buffer.from(serializeEntry(large)), names);
    assert.notEqual(kept.chunk, small.chunk);
    assert.deepEqual(expandKept(kept), large);
    assert.deepEqual(expandKept(small), entry(1, 's'));
  });

  it('leave an intent, which has no result, as it is', () => {
    const intent: JournalEntry = { ...entry(5, undefined), phase: 'intent' };
    delete intent.result;
    assert.equal(withoutResult(intent), intent);
  });
});
