// A shallow clone's journal (push.ts fetchJournal): a CI checkout fetches the journal's last commit
// only, builds on it and pushes to a remote that has the rest; a later fetch connects to it and
// sync folds the remote's appends in. Where the merge base lies below the shallow cut, git finds
// none: a run both sides hold differently is then a conflict, never overwritten (sync.ts). A full
// clone is never made shallow. Real git throughout: a bare origin, `git clone --depth 1 --single-branch`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { fetchJournal, pushOnce } from '../../src/journal/push.js';
import { syncJournals } from '../../src/journal/sync.js';
import { assertFsckClean, commitCount, gitOut, journalFile, journalFiles, runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TIMEOUT_MS = 60_000;

const stepPath = (run: string, step: number) => `runs/${run}/steps/000/${String(step).padStart(6, '0')}-work.json`;
const append = (store: JournalStore, run: string, step: number, content = `{"step":${step}}\n`) => store.append([{ path: stepPath(run, step), content }], `${run} #${step}`);

// A bare origin, and machine A (a full repository) that pushed a journal to it.
async function originWithJournal(steps: Record<string, number>) {
  const dir = scratch.dir('savepoint-shallow-');
  const origin = join(dir, 'origin.git');
  await gitOut(dir, ['init', '-q', '--bare', '-b', 'main', origin]);
  const a = await scratch.repo();
  await a.git('remote', 'add', 'origin', origin);
  await a.git('push', '-q', 'origin', 'main');
  const storeA = await JournalStore.open(a.root);
  for (const [run, count] of Object.entries(steps)) for (let step = 1; step <= count; step++) await append(storeA, run, step);
  await a.git('push', '-q', 'origin', 'agent-journal');
  const clone = async (name: string, flags: string[]) => {
    const root = join(dir, name);
    await gitOut(dir, ['clone', '-q', ...flags, `file://${origin}`, root]);
    return { root, store: await JournalStore.open(root) };
  };
  return { dir, origin, a, storeA, clone };
}

const shallowCommits = (root: string) => readFileSync(join(root, '.git', 'shallow'), 'utf8').split('\n').filter(Boolean);

describe('a shallow journal', { concurrency: true }, () => {
  test("a shallow clone fetches the journal's last commit only, goes on with it, pushes, and folds in what another machine pushed since", async () => {
    const { origin, a, storeA, clone } = await originWithJournal({ r1: 3, r2: 1 });
    const b = await clone('b', ['--depth', '1', '--single-branch']);
    const tip = await gitOut(origin, ['rev-parse', 'agent-journal']);

    assert.deepEqual(await fetchJournal(b.store, 'origin', TIMEOUT_MS), { outcome: 'fetched' });
    assert.equal(await commitCount(b.root, 'refs/remotes/origin/agent-journal'), 1, 'the last commit only');
    assert.ok(shallowCommits(b.root).includes(tip), 'git marks it shallow');
    assert.deepEqual(await syncJournals(b.store), [{ source: 'origin', action: 'created' }]);
    assert.deepEqual(await journalFiles(b.root, 'runs/r1'), [1, 2, 3].map((n) => stepPath('r1', n)), "every entry is in the tip's tree");

    // B goes on with r1 and pushes: origin has the parent, so a shallow repository's push lands.
    await append(b.store, 'r1', 4);
    assert.deepEqual(await pushOnce(b.store, 'origin', 'r1', b.store.tip!, TIMEOUT_MS), { outcome: 'landed' });
    await assertFsckClean(origin, 'origin after a push from a shallow journal');

    // A goes on with another run; B's next push is rejected, folds A's in (a fetch that connects at the shallow commit) and lands.
    await a.git('fetch', '-q', 'origin', '+agent-journal:refs/remotes/origin/agent-journal');
    assert.deepEqual((await syncJournals(storeA)).map((r) => r.action), ['fast-forward']);
    await append(storeA, 'r2', 2);
    await a.git('push', '-q', 'origin', 'agent-journal');
    await append(b.store, 'r1', 5);
    assert.deepEqual(await pushOnce(b.store, 'origin', 'r1', b.store.tip!, TIMEOUT_MS), { outcome: 'merged' });
    assert.deepEqual(await pushOnce(b.store, 'origin', 'r1', b.store.tip!, TIMEOUT_MS), { outcome: 'landed' });
    assert.deepEqual(shallowCommits(b.root).filter((oid) => oid !== tip).length, 1, "the fetch after the rejection did not cut again: only main's and the journal's first commit are shallow");
    await assertFsckClean(origin, 'origin after the merge');
    await assertFsckClean(b.root, 'the shallow clone');

    // A full clone of origin has the whole history of every run, git log -p included.
    const full = await clone('full', []);
    assert.equal(await gitOut(full.root, ['rev-parse', '--is-shallow-repository']), 'false');
    assert.deepEqual(await journalFiles(full.root, 'runs/r1', 'origin/agent-journal'), [1, 2, 3, 4, 5].map((n) => stepPath('r1', n)));
    assert.deepEqual(await journalFiles(full.root, 'runs/r2', 'origin/agent-journal'), [1, 2].map((n) => stepPath('r2', n)));
    const history = await gitOut(full.root, ['log', '-p', '--format=%s', 'origin/agent-journal', '--', 'runs/r1']);
    for (const n of [1, 2, 3, 4, 5]) assert.match(history, new RegExp(`^r1 #${n}$`, 'm'), `git log -p shows r1's step ${n}`);
  });

  test('a base below the shallow cut: git finds none, and a run both sides hold differently is a conflict, neither copy overwritten; the other runs come in', async () => {
    const { origin, a, storeA, clone } = await originWithJournal({ r1: 2 });
    const base = storeA.tip!;
    await append(storeA, 'r1', 3);
    await a.git('push', '-q', 'origin', 'agent-journal');
    const b = await clone('b', ['--depth', '1', '--single-branch']);
    assert.deepEqual(await fetchJournal(b.store, 'origin', TIMEOUT_MS), { outcome: 'fetched' });
    await syncJournals(b.store);
    await append(b.store, 'r1', 4);
    const ours = b.store.tip!;

    // A rewrites origin's journal from the base (a forced push): its own step 3 of r1, and a new run.
    await a.git('update-ref', 'refs/heads/agent-journal', base);
    await storeA.refresh();
    await append(storeA, 'r1', 3, '{"step":3,"elsewhere":true}\n');
    await append(storeA, 'r3', 1);
    await a.git('push', '-q', '--force', 'origin', 'agent-journal');

    assert.deepEqual(await fetchJournal(b.store, 'origin', TIMEOUT_MS), { outcome: 'fetched' });
    assert.equal((await runGit(b.root, ['merge-base', ours, 'refs/remotes/origin/agent-journal'])).code, 1, 'the base is below the cut');
    const [report] = await syncJournals(b.store);
    assert.equal(report?.action, 'conflict');
    assert.deepEqual(report?.conflicts?.map((c) => c.run), ['r1']);
    assert.ok(report?.conflicts?.[0]?.entries.includes(stepPath('r1', 3)), 'the entry that differs is named');
    assert.equal(report?.folded, true, 'the other runs of the fetched journal came in');
    assert.deepEqual(await journalFiles(b.root, 'runs/r1'), [1, 2, 3, 4].map((n) => stepPath('r1', n)), "this machine's copy of r1 is kept whole");
    assert.equal(await journalFile(b.root, stepPath('r1', 3)), '{"step":3}');
    assert.deepEqual(await journalFiles(b.root, 'runs/r3'), [stepPath('r3', 1)]);
    assert.equal(await journalFile(origin, stepPath('r1', 3)), '{"step":3,"elsewhere":true}', "origin's copy is untouched");
  });

  test('a full single-branch clone fetches the whole journal and stays a full repository', async () => {
    const { origin, clone } = await originWithJournal({ r1: 3 });
    const c = await clone('c', ['--single-branch']);
    assert.deepEqual(await fetchJournal(c.store, 'origin', TIMEOUT_MS), { outcome: 'fetched' });
    assert.equal(await gitOut(c.root, ['rev-parse', '--is-shallow-repository']), 'false');
    assert.equal(await commitCount(c.root, 'refs/remotes/origin/agent-journal'), await commitCount(origin));
  });
});
