// Folding a fetched journal into the local branch (src/journal/sync.ts), in this process on one real
// repository whose remote-tracking journal the test sets as a fetch would: created from it when
// there is no local journal, up to date, fast-forwarded, merged when each side added other runs; a
// run one side only extended is taken whole; a run both sides added to differently is a conflict
// that overwrites neither copy while the other runs still come in, and that stops the run about to
// be driven. Real fetches, pushes and shallow clones: test/journal/shallow-journal.test.ts,
// test/cli/machines.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JournalConflictError } from '../../src/errors/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { assertNoConflict, integrate, syncJournals } from '../../src/journal/sync.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const THEIRS = 'refs/remotes/laptop/agent-journal';
let repo: TempRepo;
before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
});
after(async () => {
  await repo.remove();
});

const rev = (ref: string) => repo.git('rev-parse', ref);
const setRef = (ref: string, to: string) => repo.git('update-ref', ref, to);
// Appends `steps` entry files (and run.json) of `run` on the local branch as it is now; its new tip.
async function append(run: string, steps: number[], text = 'x'): Promise<string> {
  const store = await JournalStore.open(repo.root);
  const files = steps.map((n) => ({ path: `runs/${run}/steps/000/${String(n).padStart(6, '0')}-work.json`, content: `{"step":${n},"text":"${text}"}\n` }));
  return store.append([{ path: `runs/${run}/run.json`, content: `{"id":"${run}","steps":${steps.length}}\n` }, ...files], `${run} ${steps.join(',')}`);
}
// The other machine's journal: commits made on the local branch from `from`, then moved to the
// remote-tracking ref, the local branch put back where it was.
async function theirs(from: string, make: () => Promise<string>): Promise<string> {
  const ours = await rev('agent-journal');
  await setRef('refs/heads/agent-journal', from);
  const tip = await make();
  await setRef(THEIRS, tip);
  await setRef('refs/heads/agent-journal', ours);
  return tip;
}
const runsAt = async (ref: string) => (await repo.git('ls-tree', '--name-only', `${ref}:runs`)).split('\n').sort();
const fold = async (focusRun?: string) => integrate(await JournalStore.open(repo.root), await rev(THEIRS), 'laptop', focusRun);

describe('folding a fetched journal into the local one', () => {
  it('creates the local journal from it, then is up to date, then fast-forwards', async () => {
    const base = await append('shared', [1]);
    await setRef(THEIRS, base);
    await repo.git('update-ref', '-d', 'refs/heads/agent-journal');
    assert.deepEqual(await syncJournals(await JournalStore.open(repo.root)), [{ source: 'laptop', action: 'created' }]);
    assert.equal(await rev('agent-journal'), base);
    assert.deepEqual(await fold(), { source: 'laptop', action: 'up-to-date' });
    await append('mine', [1]);
    assert.deepEqual(await fold(), { source: 'laptop', action: 'up-to-date' }, 'theirs is behind ours');

    const ahead = await theirs(await rev('agent-journal'), () => append('shared', [1, 2]));
    assert.deepEqual(await fold(), { source: 'laptop', action: 'fast-forward' });
    assert.equal(await rev('agent-journal'), ahead);
  });

  it('merges other runs added on each side, and takes a run one side only extended', async () => {
    const from = await rev('agent-journal');
    await theirs(from, async () => (await append('theirs-only', [1]), append('shared', [1, 2, 3])));
    const ours = await append('ours-only', [1]);
    assert.deepEqual(await fold(), { source: 'laptop', action: 'merged' });
    const merged = await rev('agent-journal');
    assert.deepEqual((await repo.git('log', '-1', '--format=%P', merged)).split(' '), [ours, await rev(THEIRS)]);
    assert.deepEqual(await runsAt('agent-journal'), ['mine', 'ours-only', 'shared', 'theirs-only']);
    assert.equal(await repo.git('rev-parse', 'agent-journal:runs/shared'), await repo.git('rev-parse', `${THEIRS}:runs/shared`), 'the longer copy of shared, whole');
  });

  it('a run both sides added to differently is a conflict: neither copy overwritten, the other runs come in, the run about to go on stops', async () => {
    const from = await rev('agent-journal');
    await theirs(from, async () => (await append('laptop-run', [1]), append('shared', [4], 'laptop')));
    await append('shared', [4], 'here');
    const ours = await rev('agent-journal');
    const mine = await repo.git('rev-parse', 'agent-journal:runs/shared');

    await assert.rejects(fold('shared'), (error: unknown) => error instanceof JournalConflictError && error.code === 'EJOURNALCONFLICT' && error.data.run === 'shared');
    assert.equal(await rev('agent-journal'), ours, 'stopping writes nothing');

    const reports = await syncJournals(await JournalStore.open(repo.root), 'another');
    assert.deepEqual(reports, [{ source: 'laptop', action: 'conflict', conflicts: [{ run: 'shared', entries: ['runs/shared/steps/000/000004-work.json'] }], folded: true }]);
    assert.equal(await repo.git('rev-parse', 'agent-journal:runs/shared'), mine, 'our copy stays');
    assert.ok((await runsAt('agent-journal')).includes('laptop-run'), 'the other runs came in');
    assert.deepEqual((await repo.git('log', '-1', '--format=%P', 'agent-journal')).split(' '), [ours], 'not a merge: the divergence is named again at the next sync');
    assert.throws(() => assertNoConflict(reports, 'shared'), JournalConflictError);
    assertNoConflict(reports, 'laptop-run');

    const again = await syncJournals(await JournalStore.open(repo.root));
    assert.deepEqual(again.map((r) => [r.action, r.folded]), [['conflict', false]], 'named again; nothing more to fold in');
  });
});
