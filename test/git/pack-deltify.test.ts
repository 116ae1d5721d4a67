// A run's end packs the journal itself (pack-deltify.ts): each object deltified against the one it
// derives from. Judged by git: fsck --strict, verify-pack (chains no longer than git's default),
// clone, gc --auto; and against git's own best packing of the same objects, which it must beat.
// Journals git packed, merges of fetched journals, tags and objects no commit reaches go in too.
import assert from 'node:assert/strict';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { makeObject, makeTree, FILE_MODE, type Tree } from '../../src/git/git-object.js';
import { MAX_DEPTH } from '../../src/git/pack-deltify.js';
import { assertFsckClean, gitOut, journalFile } from '../helpers/git.js';
import { appendUntilKilled, rollupStepPath } from '../helpers/rollup-kills.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

const path = (step: number, kind: string, intent = false) => `runs/r/steps/${String(Math.floor(step / 100)).padStart(3, '0')}/${String(step).padStart(6, '0')}-${kind}${intent ? '.intent' : ''}.json`;
const entry = (step: number, kind: string, extra: Record<string, unknown> = {}) => `${JSON.stringify({ format: 'savepoint/entry@1', run: 'r', step, kind, startedAt: new Date(1e12 + step * 1000).toISOString(), ...extra }, null, 2)}\n`;

// A run of `turns` bash turns as RunJournal writes them (model result, intent, result with a
// checkpoint of a working tree whose file grows by a line each turn), starting at step `from`.
async function appendTurns(store: JournalStore, from: number, turns: number): Promise<void> {
  for (let t = 0; t < turns; t++) {
    const step = from + t * 3;
    await store.append([{ path: path(step, 'model'), content: entry(step, 'model', { result: { content: [{ type: 'tool_use', name: 'run_bash' }] } }) }], `r #${step} model turn`);
    await store.append([{ path: path(step + 1, 'run_bash', true), content: entry(step + 1, 'run_bash') }], `r #${step + 1} run_bash (started)`);
    const file = makeObject('blob', Buffer.from(Array.from({ length: 40 + from + t }, (_, i) => `line ${i} of the agent's work\n`).join('')));
    const tree = makeTree(new Map([['notes.txt', { mode: FILE_MODE, oid: file.oid }]]) as Tree);
    store.objects.write([file, tree]); // a checkpoint's objects go loose, as checkpoints write them
    await store.append(
      [
        { path: path(step + 1, 'run_bash'), content: entry(step + 1, 'run_bash', { result: { output: `exit 0\n${t}` }, checkpoint: tree.oid }) },
        { path: 'runs/r/worktree', tree: tree.oid },
        ...(t % 20 === 0 ? [{ path: 'runs/r/run.json', content: `${JSON.stringify({ format: 'savepoint/run@1', id: 'r', status: 'running', step })}\n` }] : []),
      ],
      `r #${step + 1} run_bash "true" -> exit 0`,
    );
  }
}

interface PackStats {
  bytes: number;
  maxChain: number;
  trees: number;
  treeDeltas: number;
}

async function packStats(root: string): Promise<PackStats> {
  const dir = join(root, '.git/objects/pack');
  const stats: PackStats = { bytes: 0, maxChain: 0, trees: 0, treeDeltas: 0 };
  for (const idx of readdirSync(dir).filter((name) => name.endsWith('.idx'))) {
    const out = await gitOut(root, ['verify-pack', '-v', join(dir, idx)]);
    for (const line of out.split('\n')) {
      const fields = line.split(/\s+/);
      if (/^[0-9a-f]{40}$/.test(fields[0]!) && ['commit', 'tree', 'blob', 'tag'].includes(fields[1]!)) {
        stats.bytes += Number(fields[3]);
        if (fields[1] === 'tree') stats.trees++;
        if (fields[1] === 'tree' && fields.length > 6) stats.treeDeltas++;
      }
      const chain = /^chain length = (\d+):/.exec(line);
      if (chain) stats.maxChain = Math.max(stats.maxChain, Number(chain[1]));
    }
  }
  return stats;
}

describe("a run's end packs the journal itself", () => {
  it('leaves one pack, smaller than git repack -adf --window=250 of the same objects, that git reads whole', async () => {
    const repo = await scratch.repo();
    const loose = (await gitOut(repo.root, ['count-objects', '-v'])).split('\n')[0];
    const store = await JournalStore.open(repo.root);
    await appendTurns(store, 1, 70);
    store.objects.write([makeObject('blob', Buffer.from('a checkpoint no entry names\n'))]); // reached by no commit: packed all the same
    await store.objects.rollup.settle();
    const tidied = await store.objects.rollup.tidy();
    assert.equal(tidied?.deltified, true);
    const packs = readdirSync(join(repo.root, '.git/objects/pack'));
    assert.deepEqual(packs.map((name) => name.replace(/^pack-[0-9a-f]{40}/, '')).sort(), ['.idx', '.pack'], `one pack: ${packs.join(', ')}`);
    assert.equal((await gitOut(repo.root, ['count-objects', '-v'])).split('\n')[0], loose, 'the loose objects left are the user\'s own');
    await assertFsckClean(repo.root);
    const ours = await packStats(repo.root);
    assert.ok(ours.maxChain <= MAX_DEPTH, `chains of at most ${MAX_DEPTH}: ${ours.maxChain}`);
    assert.ok(ours.treeDeltas > ours.trees * 0.9, `small trees are deltas too: ${ours.treeDeltas} of ${ours.trees}`);

    // git's best packing of the very same objects.
    const copy = join(scratch.dir(), 'copy');
    cpSync(repo.root, copy, { recursive: true });
    await gitOut(copy, ['repack', '-q', '-a', '-d', '-f', '--window=250', '--depth=250']);
    const gits = await packStats(copy);
    assert.ok(ours.bytes < gits.bytes * 0.8, `ours ${ours.bytes} bytes, git's ${gits.bytes}`);

    // Everything reads back: here, in a fresh store, after gc --auto (nothing to do), in a clone.
    assert.match(await journalFile(repo.root, path(209, 'run_bash')), /"checkpoint"/);
    const fresh = await JournalStore.open(repo.root);
    for (const step of [1, 2, 101, 206, 208]) assert.ok((await fresh.fileAt(path(step, step % 3 === 1 ? 'model' : 'run_bash')))?.toString().includes(`"step": ${step}`));
    assert.equal((await fresh.fileAt('runs/r/worktree/notes.txt'))?.toString().split('\n').length, 40 + 1 + 69 + 1);
    await gitOut(repo.root, ['gc', '--auto']);
    assert.equal(readdirSync(join(repo.root, '.git/objects/pack')).length, 2);
    const clone = join(scratch.dir(), 'clone');
    await gitOut(scratch.dir(), ['clone', '-q', '--no-local', repo.root, clone]);
    await gitOut(clone, ['fetch', '-q', 'origin', 'agent-journal:agent-journal']);
    await assertFsckClean(clone);
    assert.equal(await gitOut(clone, ['rev-parse', 'agent-journal']), await gitOut(repo.root, ['rev-parse', 'agent-journal']));
  });

  it('repacks a journal git packed, with a merge of a fetched journal and a tag, losing nothing', async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    await appendTurns(store, 1, 20);
    // A merge commit as sync writes one (the local tip first, then another line), and an annotated tag.
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    const side = await gitOut(repo.root, ['commit-tree', `${tip}^{tree}`, '-p', `${tip}~5`, '-m', 'another machine']);
    const merge = await gitOut(repo.root, ['commit-tree', `${tip}^{tree}`, '-p', tip, '-p', side, '-m', 'r merged']);
    await gitOut(repo.root, ['update-ref', 'refs/heads/agent-journal', merge, tip]);
    await gitOut(repo.root, ['tag', '-a', '-m', 'a tag on the journal', 'journal-tag', `${tip}~3`]);
    await gitOut(repo.root, ['repack', '-q', '-a', '-d']); // git's own deltas, in one pack
    const before = (await gitOut(repo.root, ['rev-list', '--objects', '--all'])).split('\n').map((line) => line.slice(0, 40));
    const again = await JournalStore.open(repo.root);
    await appendTurns(again, 61, 20);
    await again.objects.rollup.settle();
    assert.equal((await again.objects.rollup.tidy())?.deltified, true);
    assert.equal(readdirSync(join(repo.root, '.git/objects/pack')).filter((name) => name.endsWith('.pack')).length, 1);
    await assertFsckClean(repo.root);
    const after = (await gitOut(repo.root, ['rev-list', '--objects', '--all'])).split('\n').map((line) => line.slice(0, 40));
    assert.ok(before.every((oid) => after.includes(oid)), 'every object reachable before is still there');
    assert.equal(await gitOut(repo.root, ['cat-file', '-t', 'journal-tag']), 'tag');
    assert.equal(await gitOut(repo.root, ['rev-parse', `${merge}^2`]), side);
    assert.ok((await packStats(repo.root)).maxChain <= MAX_DEPTH);
    assert.match((await (await JournalStore.open(repo.root)).fileAt(path(62, 'run_bash')))!.toString(), /"step": 62/);
  });

  it('loses nothing when the process is killed with SIGKILL in the middle of one', async () => {
    const repo = await scratch.repo();
    const returned = await appendUntilKilled(repo.root, { rounds: 6, delayMs: (round) => 40 + round * 53, tidy: true });
    await assertFsckClean(repo.root);
    const store = await JournalStore.open(repo.root);
    for (const i of returned) assert.match((await store.fileAt(rollupStepPath(i)))?.toString() ?? '', new RegExp(`"step":${i},`), `step ${i}`);
    await store.objects.rollup.tidy();
    await assertFsckClean(repo.root);
    for (const i of returned) assert.match((await store.fileAt(rollupStepPath(i)))?.toString() ?? '', new RegExp(`"step":${i},`), `step ${i} after the roll-up`);
  });
});
