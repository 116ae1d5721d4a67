// The order a pack's objects lie in, read from its index: what a roll-up hands git so that the
// new pack keeps the steps in the order they were written (and a replay reads them).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeObject } from '../../src/git/git-object.js';
import { PackBuilder, packIndexIds, packIndexIdsInPackOrder } from '../../src/git/pack-file.js';

describe('the ids of a pack in pack order', () => {
  it('are the objects in the order they were written, where the index sorts them by id', () => {
    const objects = Array.from({ length: 40 }, (_, i) => makeObject('blob', Buffer.from(`step ${i}: ${'x'.repeat(i * 37)}\n`)));
    const builder = new PackBuilder();
    for (const object of objects) builder.add(object);
    const { idx } = builder.build();
    assert.deepEqual(packIndexIdsInPackOrder(idx), objects.map((o) => o.oid));
    assert.deepEqual(packIndexIds(idx), objects.map((o) => o.oid).sort(), 'the index itself lists them by id');
  });
});
