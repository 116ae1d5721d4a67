// The journal's packs: every append writes one small pack, and the small packs are rolled up in the
// background (deltified by git, and at a run's end by pack-deltify.ts) so that a long run leaves a
// few packs, no loose objects of its own, nothing for `git gc --auto` to do, and far less on disk.
// Judged by git itself: fsck --strict, count-objects, gc --auto, clone. A child killed with SIGKILL
// mid roll-up loses nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { makeObject } from '../../src/git/git-object.js';
import { ROLL_TRIGGER_PACKS } from '../../src/git/pack-rollup.js';
import { assertFsckClean, gitOut, journalFile } from '../helpers/git.js';
import { appendUntilKilled, rollupStepContent, rollupStepPath } from '../helpers/rollup-kills.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

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
