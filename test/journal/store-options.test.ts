// What a store tells its hooks, and the mark on an error its afterAppend hook threw: the append it
// ended had landed (a failed push), so the caller does not take the entries for unwritten; an error
// of the append itself carries no mark. Shown on the in-memory store, which keeps the same contract.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appendedCommitOf, markAppended, type AppendInfo } from '../../src/journal/store-options.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';

describe('store options', () => {
  it('tell afterAppend each commit and whether it fences a one-shot effect', async () => {
    const told: Array<[string, AppendInfo]> = [];
    const store = new MemoryJournalStore({ afterAppend: async (commit, append) => void told.push([commit, append]) });
    const first = await store.append([{ path: 'runs/r/a.json', content: '{}\n' }], 'first');
    const second = await store.append([{ path: 'runs/r/b.json', content: '{}\n' }], 'second', undefined, 'run_bash: deploy');
    assert.deepEqual(told, [[first, { fence: false }], [second, { fence: true, what: 'run_bash: deploy' }]]);
  });

  it('mark an error afterAppend threw with the commit already on the branch, and only such an error', async () => {
    const pushFailed = new Error('the push was refused');
    const store = new MemoryJournalStore({ afterAppend: async () => { throw pushFailed; } });
    const thrown = await store.append([{ path: 'runs/r/a.json', content: '{}\n' }], 'landed').then(() => undefined, (error: unknown) => error);
    assert.equal(thrown, pushFailed);
    assert.equal(appendedCommitOf(thrown), store.tip, 'the append landed before its hook failed');
    assert.deepEqual(Object.keys(pushFailed), [], 'the mark is not one of the error\'s own fields (nothing prints it)');
    assert.equal(appendedCommitOf(new Error('the disk is full')), undefined);
    for (const value of [undefined, null, 'text', 7]) assert.equal(appendedCommitOf(value), undefined);
    markAppended('not an object', 'a'.repeat(40));
    const again = new Error('failed for good');
    markAppended(again, 'a'.repeat(40));
    markAppended(again, 'b'.repeat(40));
    assert.equal(appendedCommitOf(again), 'b'.repeat(40), 'one error may end several appends: the last one is named');
  });
});
