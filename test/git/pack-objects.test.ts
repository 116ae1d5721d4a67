// The roll-ups' `git pack-objects` runs in the user's repository: its pack configuration must not
// change what a roll-up writes (one pack, a version-2 index the pack reader reads, no reverse
// index, deltas), and a git too old for --stdin-packs still rolls up (by object id). Judged by git:
// fsck --strict, the files in objects/pack, and every step read back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { rollupStepContent, rollupStepPath } from '../helpers/rollup-kills.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// 1.5 MB that no delta or zlib shrinks, then `steps` versions of a 100 KB file a line apart.
const RANDOM_BYTES = 1536 * 1024;
const base = randomBytes(50 * 1024).toString('hex');
async function appendSimilarSteps(store: JournalStore, steps: number): Promise<void> {
  await store.append([{ path: 'runs/r/random.bin', content: randomBytes(RANDOM_BYTES) }], 'r #0 random');
  for (let i = 1; i <= steps; i++) await store.append([{ path: rollupStepPath(i), content: `${base}\nstep ${i}\n` }], `r #${i} run_bash`);
  await store.objects.rollup.settle();
}

function packFiles(root: string): string[] {
  return readdirSync(join(root, '.git/objects/pack')).map((name) => name.replace(/^pack-[0-9a-f]{40}/, '')).sort();
}

describe("the roll-ups' git pack-objects", () => {
  it("writes one deltified pack with a version-2 index whatever the repository's pack configuration says", async () => {
    const repo = await scratch.repo();
    for (const [key, value] of [['pack.packSizeLimit', '1m'], ['pack.indexVersion', '1'], ['pack.window', '0'], ['pack.depth', '0'], ['pack.writeReverseIndex', 'true'], ['pack.compression', '0']]) {
      await gitOut(repo.root, ['config', key!, value!]);
    }
    const store = await JournalStore.open(repo.root);
    await appendSimilarSteps(store, 40);
    // Every pack at once (past DELTIFY_BYTES: through git), whatever the roll-ups along the way did.
    const tidied = await store.objects.rollup.rollNow(true);
    // Nothing left to roll up means a background roll-up through git already made the one pack;
    // the pack's size below shows it is deltified either way.
    if (tidied) assert.equal(tidied.deltified, true);
    assert.deepEqual(packFiles(repo.root), ['.idx', '.pack'], 'one pack, no reverse index');
    const packDir = join(repo.root, '.git/objects/pack');
    const idx = readFileSync(join(packDir, readdirSync(packDir).find((name) => name.endsWith('.idx'))!));
    assert.equal(idx.readUInt32BE(0), 0xff744f63, 'a version-2 index starts with its magic');
    assert.equal(idx.readUInt32BE(4), 2);
    // Undeltified, the 40 versions alone take 4 MB; deltified, a little more than the random file.
    const bytes = readdirSync(packDir).reduce((total, name) => total + statSync(join(packDir, name)).size, 0);
    assert.ok(bytes < RANDOM_BYTES + 300 * 1024, `${bytes} bytes`);
    await assertFsckClean(repo.root);
    const fresh = await JournalStore.open(repo.root);
    for (const i of [1, 20, 40]) assert.equal((await fresh.fileAt(rollupStepPath(i)))?.toString(), `${base}\nstep ${i}\n`);
  });

  it('still rolls up with a git that has no --stdin-packs (before 2.32), by object id', async () => {
    const realGit = (await gitOut(scratch.dir(), ['--exec-path'])).replace(/\/?$/, '/git');
    const bin = scratch.dir('savepoint-old-git-');
    // A git that refuses --stdin-packs the way git 2.31 does, and is the real one otherwise.
    const calls = join(bin, 'calls');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${calls}'\nfor a in "$@"; do [ "$a" = --stdin-packs ] && { echo "error: unknown option \\\`stdin-packs'" >&2; exit 129; }; done\nexec '${realGit}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    after(() => void (process.env.PATH = path));
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    for (let i = 0; i < 30; i++) await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i} run_bash`);
    await store.objects.rollup.settle();
    const tidied = await store.objects.rollup.tidy();
    process.env.PATH = path;
    assert.equal(tidied?.deltified, true);
    const packing = readFileSync(calls, 'utf8').split('\n').filter((line) => line.includes('pack-objects'));
    assert.ok(packing.length >= 2 && packing[0]!.includes('--stdin-packs') && !packing[1]!.includes('--stdin-packs'), packing.join('\n'));
    assert.deepEqual(packFiles(repo.root), ['.idx', '.pack']);
    await assertFsckClean(repo.root);
    const fresh = await JournalStore.open(repo.root);
    for (const i of [0, 15, 29]) assert.equal((await fresh.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i));
  });
});
