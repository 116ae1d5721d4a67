// The journal's packs: every append writes one small pack, and the small packs are rolled up in the
// background (large roll-ups and a run's end deltified by `git pack-objects`) so that a long run
// leaves a few packs, no loose objects of its own, nothing for `git gc --auto` to do, and about what
// `git repack -a -d -f` would leave on disk. Judged by git itself: fsck --strict, count-objects,
// verify-pack, gc --auto, clone. A child killed with SIGKILL mid roll-up loses nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { FILE_MODE, makeObject, makeTree, type Tree } from '../../src/git/git-object.js';
import { ROLL_TRIGGER_PACKS } from '../../src/git/pack-rollup.js';
import { assertFsckClean, gitOut, journalFile } from '../helpers/git.js';
import { appendUntilKilled, rollupStepContent, rollupStepPath } from '../helpers/rollup-kills.js';
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

// The bytes the packs of `root` take (pack and index files) and their longest delta chain, by verify-pack.
async function packStats(root: string): Promise<{ bytes: number; maxChain: number }> {
  const dir = join(root, '.git/objects/pack');
  const stats = { bytes: 0, maxChain: 0 };
  for (const name of readdirSync(dir)) {
    if (/\.(pack|idx)$/.test(name)) stats.bytes += statSync(join(dir, name)).size;
    if (!name.endsWith('.idx')) continue;
    for (const chain of (await gitOut(root, ['verify-pack', '-v', join(dir, name)])).matchAll(/^chain length = (\d+):/gm)) stats.maxChain = Math.max(stats.maxChain, Number(chain[1]));
  }
  return stats;
}

async function countObjects(root: string): Promise<Record<string, string>> {
  const out = await gitOut(root, ['count-objects', '-v']);
  return Object.fromEntries(out.split('\n').map((line) => line.split(': ') as [string, string]));
}

describe('the journal as packs', () => {
  it('leaves few packs after 300 appends, one deltified pack once tidied, no loose objects of its own, and nothing for git gc --auto', async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    for (let i = 0; i < 300; i++) {
      // A checkpoint's objects go loose (ObjectStore.write); the roll-ups pack them and remove them.
      if (i % 10 === 0) store.objects.write([makeObject('blob', Buffer.from(`checkpoint ${i}\n`))]);
      await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i} run_bash`);
    }
    // Along the way, roll-ups copied small packs together (no git process); a run's end deltifies them.
    const along = await store.objects.rollup.settle();
    assert.ok(along === undefined || along.deltified === false || along.removed.length > 0);
    assert.ok(Number((await countObjects(repo.root)).packs) <= ROLL_TRIGGER_PACKS + 4);
    const tidied = await store.objects.rollup.tidy();
    assert.equal(tidied?.deltified, true);
    const counts = await countObjects(repo.root);
    assert.ok(Number(counts.packs) <= ROLL_TRIGGER_PACKS + 4, `few packs: ${counts.packs}`);
    assert.ok(Number(counts.count) < 30, `no pile of loose objects: ${counts.count}`);
    assert.equal(counts.garbage, '0');
    // Undeltified, 300 appends take over 1 MB; deltas bring them to a small fraction.
    assert.ok(Number(counts['size-pack']) < 400, `size-pack ${counts['size-pack']} KiB`);
    await assertFsckClean(repo.root);
    // gc --auto finds nothing to do: it would otherwise have repacked into a single pack.
    await gitOut(repo.root, ['gc', '--auto']);
    assert.equal((await countObjects(repo.root)).packs, counts.packs);

    // Everything reads back, in this process and in a fresh one, and in a clone.
    assert.equal(await journalFile(repo.root, rollupStepPath(299)), rollupStepContent(299).trimEnd());
    const fresh = await JournalStore.open(repo.root);
    for (const i of [0, 1, 150, 299]) assert.equal((await fresh.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i));
    assert.equal((await store.fileAt(rollupStepPath(7)))?.toString(), rollupStepContent(7));
    const clone = join(scratch.dir(), 'clone');
    await gitOut(scratch.dir(), ['clone', '-q', '--no-local', repo.root, clone]);
    await gitOut(clone, ['fetch', '-q', 'origin', 'agent-journal:agent-journal']);
    await assertFsckClean(clone);
    assert.equal(await journalFile(clone, rollupStepPath(123)), rollupStepContent(123).trimEnd());
  });

  it('leaves packs it did not make alone: a kept pack and one over the size limit', async () => {
    const repo = await scratch.repo();
    writeFileSync(join(repo.root, 'big.bin'), randomBytes(9 * 1024 * 1024)); // incompressible: its pack is over 8 MB
    await gitOut(repo.root, ['add', 'big.bin']);
    await gitOut(repo.root, ['commit', '-qm', 'big']);
    await gitOut(repo.root, ['repack', '-q', '-a', '-d']);
    writeFileSync(join(repo.root, 'kept.txt'), 'kept\n');
    await gitOut(repo.root, ['add', 'kept.txt']);
    await gitOut(repo.root, ['commit', '-qm', 'kept']);
    await gitOut(repo.root, ['repack', '-q', '-d']);
    const packDir = join(repo.root, '.git', 'objects', 'pack');
    const before = readdirSync(packDir).filter((n) => n.endsWith('.pack')).sort();
    assert.equal(before.length, 2);
    // The big pack is over the size limit by itself; the small one gets a .keep.
    const keptPack = before.reduce((a, b) => (statSync(join(packDir, a)).size < statSync(join(packDir, b)).size ? a : b));
    writeFileSync(join(packDir, keptPack.replace(/\.pack$/, '.keep')), '');
    const store = await JournalStore.open(repo.root);
    for (let i = 0; i < 60; i++) await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i}`);
    await store.objects.rollup.rollNow(true);
    const after = readdirSync(packDir).filter((n) => n.endsWith('.pack'));
    for (const name of before) assert.ok(after.includes(name), `${name} is still there`);
    assert.equal(after.length, before.length + 1, `the journal's packs are one: ${after.join(', ')}`);
    await assertFsckClean(repo.root);
  });

  it('leaves the packs a multi-pack-index lists (git maintenance writes one) and rolls up the rest', async () => {
    const repo = await scratch.repo();
    await gitOut(repo.root, ['repack', '-q', '-d']);
    await gitOut(repo.root, ['multi-pack-index', 'write']);
    const packDir = join(repo.root, '.git', 'objects', 'pack');
    const listed = readdirSync(packDir).filter((n) => n.endsWith('.pack'));
    assert.equal(listed.length, 1);
    const store = await JournalStore.open(repo.root);
    for (let i = 0; i < 40; i++) await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i}`);
    await store.objects.rollup.settle();
    const rolled = await store.objects.rollup.rollNow(true);
    assert.ok(rolled && rolled.packs >= 2, 'the journal packs were rolled up');
    const after = readdirSync(packDir).filter((n) => n.endsWith('.pack'));
    assert.ok(after.includes(listed[0]!), 'the listed pack is still there');
    assert.equal(after.length, 2, after.join(', '));
    await gitOut(repo.root, ['multi-pack-index', 'verify']);
    await assertFsckClean(repo.root);
  });

  it('loses nothing when the process is killed with SIGKILL in the middle of roll-ups', async () => {
    const repo = await scratch.repo();
    const returned = await appendUntilKilled(repo.root, { rounds: 8, delayMs: (round) => 30 + round * 37 });
    await assertFsckClean(repo.root);
    const store = await JournalStore.open(repo.root);
    for (const i of returned) assert.equal((await store.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i), `step ${i}`);
    // A kill between a pack's two renames (or removals) leaves a .pack with no .idx, as git's own
    // repack does; once old, the next roll-up removes it.
    const packDir = join(repo.root, '.git', 'objects', 'pack');
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const name of readdirSync(packDir)) utimesSync(join(packDir, name), hourAgo, hourAgo);
    await store.objects.rollup.rollNow(true);
    assert.equal((await countObjects(repo.root)).garbage, '0', `objects/pack: ${readdirSync(packDir).join(' ')}`);
    await assertFsckClean(repo.root);
    for (const i of returned) assert.equal((await store.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i), `step ${i} after the roll-up`);
  });
});

describe("a run's end deltifies the journal with git", () => {
  it('leaves one pack about the size git repack -a -d -f makes of the same objects, that git reads whole', async () => {
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
    assert.equal((await gitOut(repo.root, ['count-objects', '-v'])).split('\n')[0], loose, "the loose objects left are the user's own");
    await assertFsckClean(repo.root);
    const ours = await packStats(repo.root);
    assert.ok(ours.maxChain <= 50, `chains of at most git's default depth: ${ours.maxChain}`);

    // git's own repack of the very same objects.
    const copy = join(scratch.dir(), 'copy');
    cpSync(repo.root, copy, { recursive: true });
    await gitOut(copy, ['repack', '-q', '-a', '-d', '-f']);
    const gits = await packStats(copy);
    assert.ok(ours.bytes <= gits.bytes * 1.2, `ours ${ours.bytes} bytes, git's ${gits.bytes}`);

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
    const after = new Set((await gitOut(repo.root, ['rev-list', '--objects', '--all'])).split('\n').map((line) => line.slice(0, 40)));
    assert.ok(before.every((oid) => after.has(oid)), 'every object reachable before is still there');
    assert.equal(await gitOut(repo.root, ['cat-file', '-t', 'journal-tag']), 'tag');
    assert.equal(await gitOut(repo.root, ['rev-parse', `${merge}^2`]), side);
    assert.match((await (await JournalStore.open(repo.root)).fileAt(path(62, 'run_bash')))!.toString(), /"step": 62/);
  });

  it('loses nothing when the process is killed with SIGKILL in the middle of one', async () => {
    const repo = await scratch.repo();
    const returned = await appendUntilKilled(repo.root, { rounds: 6, delayMs: (round) => 40 + round * 53, tidy: true });
    await assertFsckClean(repo.root);
    const store = await JournalStore.open(repo.root);
    for (const i of returned) assert.equal((await store.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i), `step ${i}`);
    await store.objects.rollup.tidy();
    await assertFsckClean(repo.root);
    for (const i of returned) assert.equal((await store.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i), `step ${i} after the roll-up`);
  });
});
