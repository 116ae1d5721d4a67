// git's delta format as delta.ts writes it: every delta applies back to its target, including the
// corners of the format (empty sides, copies of 64 KB and over, offsets past 16 MB, a base large
// enough to be indexed sparsely), and the deltas the journal makes are as small as they should be.
// That git applies them the same way is judged in pack-deltify.test.ts (fsck, verify-pack).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { encodeDelta } from '../../src/git/delta.js';
import { applyDelta } from '../../src/git/pack-delta.js';

function roundTrip(base: Buffer, target: Buffer): Buffer {
  const delta = encodeDelta(base, target);
  assert.ok(delta, 'a delta without a limit is always made');
  assert.ok(applyDelta(delta, base).equals(target), `round trip of ${base.length} -> ${target.length} bytes`);
  return delta;
}

describe('git deltas (delta.ts)', () => {
  it('round-trips the corners of the format', () => {
    const some = randomBytes(3000);
    roundTrip(Buffer.alloc(0), Buffer.alloc(0));
    roundTrip(Buffer.alloc(0), some);
    roundTrip(some, Buffer.alloc(0));
    roundTrip(Buffer.from('short'), Buffer.from('shorter'));
    roundTrip(Buffer.alloc(5000, 'a'), Buffer.alloc(7000, 'a')); // one byte repeated: candidates are capped
    // Copies of exactly 64 KB (encoded as size 0), longer ones, and a base past 16 MB (four offset bytes).
    const big = randomBytes(17 * 1024 * 1024);
    const far = Buffer.concat([big.subarray(16 * 1024 * 1024 + 5, 16 * 1024 * 1024 + 5 + 0x10000), Buffer.from('new'), big.subarray(100, 300_000)]);
    const delta = roundTrip(big, far);
    assert.ok(delta.length < 200, `copies, not inserts: ${delta.length} bytes`);
    // A base over 64 KB is indexed one position in 16; matches are still found and grown.
    const large = randomBytes(200_000);
    const edited = Buffer.concat([large.subarray(0, 50_000), Buffer.from('an inserted line\n'), large.subarray(50_003, 120_000), large.subarray(130_000)]);
    assert.ok(roundTrip(large, edited).length < 100);
    for (let i = 0; i < 200; i++) {
      const a = randomBytes(1 + Math.floor(Math.random() * 400));
      const cut = Math.floor(Math.random() * a.length);
      const b = Buffer.concat([a.subarray(cut), randomBytes(Math.floor(Math.random() * 40)), a.subarray(0, cut), a.subarray(0, Math.min(a.length, 30))]);
      roundTrip(a, b);
      roundTrip(b, a);
    }
  });

  it('makes the deltas a journal needs small: a tree whose one entry changed, a list one entry longer', () => {
    const entry = (name: string, id = randomBytes(20)) => Buffer.concat([Buffer.from(`100644 ${name}\0`), id]);
    const run = [entry('run.json'), entry('steps'), entry('worktree')];
    const next = [run[0]!, entry('steps'), run[2]!];
    // The new id (20 bytes), an insert instruction, two copies and the two sizes.
    assert.ok(roundTrip(Buffer.concat(run), Buffer.concat(next)).length <= 30);
    const shard = Array.from({ length: 60 }, (_, i) => entry(`0000${i}-run_bash.json`));
    const longer = Buffer.concat([...shard, entry('000060-model.json')]);
    assert.ok(roundTrip(longer, Buffer.concat(shard)).length <= 8, 'the older list is a copy of the newer one');
    assert.ok(roundTrip(Buffer.concat(shard), longer).length <= 70);
  });

  it('gives up past its limit, and refuses a delta that does not fit its base', () => {
    const base = randomBytes(1000);
    assert.equal(encodeDelta(base, randomBytes(1000), 500), undefined);
    const delta = encodeDelta(base, Buffer.concat([base, base]))!;
    assert.throws(() => applyDelta(delta, base.subarray(1)), /base has the wrong size/);
    assert.throws(() => applyDelta(delta.subarray(0, delta.length - 1), base), /size|range/);
  });
});
