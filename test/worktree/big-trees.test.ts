// Big working trees and submodules. Thousands of untracked files land in one pack (not one loose
// file each) and the checkpoint is still exactly git's own tree, fsck-clean; a second process over
// the same files adds nothing. Inside a submodule's working tree, a step's edits are recorded (the
// submodule is a subtree of the checkpoint), seen by `savepoint show`, and put back by a restore.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PACK_THRESHOLD } from '../../src/git/object-batch.js';
import { restoreWorktree } from '../../src/worktree/restore.js';
import { runCli } from '../helpers/cli.js';
import { assertFsckClean, gitOut, journalFile } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { gitWorktreeTree, lsTree, objectsFor, snapshotterFor } from './support.js';

const scratch = useScratch();

function packs(root: string): string[] {
  try {
    return readdirSync(join(root, '.git/objects/pack')).filter((name) => name.endsWith('.pack'));
  } catch {
    return [];
  }
}

async function looseCount(root: string): Promise<number> {
  const out = await gitOut(root, ['count-objects', '-v']);
  return Number(/^count: (\d+)$/m.exec(out)![1]);
}

describe('big working trees', () => {
  test('2,000 untracked files: one pack, the tree git makes, fsck-clean; a new process writes nothing more', async () => {
    const repo = await scratch.repo({ 'README.md': '# big\n', '.gitignore': 'ignored/\n' });
    const files = 2000;
    for (let i = 0; i < files; i++) {
      const dir = join(repo.root, `node_modules/pkg${Math.floor(i / 100)}`);
      if (i % 100 === 0) mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.js`), `module.exports = ${i};\n`);
    }
    mkdirSync(join(repo.root, 'ignored'));
    writeFileSync(join(repo.root, 'ignored/secret.txt'), 'not recorded\n');
    const looseBefore = await looseCount(repo.root);

    const first = snapshotterFor(repo.root).snapshot();
    assert.equal(first.tree, await gitWorktreeTree(repo.root));
    assert.equal(packs(repo.root).length, 1, 'the new objects went into one pack');
    assert.ok((await looseCount(repo.root)) - looseBefore < PACK_THRESHOLD, 'and not into loose files');
    assert.ok(!(await lsTree(repo.root, first.tree)).has('ignored/secret.txt'), 'ignored files are not recorded');
    // git can read every object of the pack (the tree and each blob), and fsck is clean.
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', `${first.tree}:node_modules/pkg7/f777.js`]), 'module.exports = 777;');
    await gitOut(repo.root, ['update-ref', 'refs/test/checkpoint', await gitOut(repo.root, ['commit-tree', first.tree, '-m', 'checkpoint'])]);
    await assertFsckClean(repo.root, 'after a packed checkpoint');
    // git's own check of the pack and its index (checksums, every CRC, every object's id).
    const [pack] = packs(repo.root);
    const verified = await gitOut(repo.root, ['verify-pack', '-v', join(repo.root, '.git/objects/pack', pack!.replace(/\.pack$/, '.idx'))]);
    assert.match(verified, /: ok$/m);

    // A new snapshotter (a later run's process) finds everything already stored.
    const again = snapshotterFor(repo.root).snapshot();
    assert.equal(again.tree, first.tree);
    assert.equal(packs(repo.root).length, 1, 'no second pack for the same files');

    // After an edit, the next checkpoint is small again: loose objects, no new pack.
    writeFileSync(join(repo.root, 'node_modules/pkg3/f300.js'), 'module.exports = "edited";\n');
    const edited = snapshotterFor(repo.root).snapshot();
    assert.equal(edited.tree, await gitWorktreeTree(repo.root));
    assert.equal(packs(repo.root).length, 1);
  });
});

describe('file bytes', () => {
  test('a text file that is not UTF-8 is recorded byte for byte', async () => {
    const repo = await scratch.repo({ 'README.md': '# r\n' });
    writeFileSync(join(repo.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café" in Latin-1
    const snapshot = snapshotterFor(repo.root).snapshot();
    assert.equal(snapshot.tree, await gitWorktreeTree(repo.root));
  });
});

describe('submodules', () => {
  test("an edit inside a submodule's working tree is recorded, shown by savepoint show, and restored", async () => {
    const lib = await scratch.repo({ 'lib.js': 'export const v = 1;\n', 'docs/a.md': 'a\n' });
    const app = await scratch.repo({ 'app.js': 'import "./vendor/lib/lib.js";\n' });
    await gitOut(app.root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.root, 'vendor/lib']);
    await gitOut(app.root, ['commit', '-q', '-m', 'add submodule']);

    const dir = scratch.dir('savepoint-script-');
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { tools: [{ name: 'run_bash', input: { command: "sed -i 's/v = 1/v = 2/' vendor/lib/lib.js && echo new > vendor/lib/added.txt" } }] },
          { text: 'Done.' },
        ],
      }),
    );
    const result = await runCli(['run', '--yes', '--run', 'sub', '--model', `script:${script}`, 'edit the submodule'], { cwd: app.root, env: {} });
    assert.equal(result.code, 0, result.stderr);
    const bash = JSON.parse(await journalFile(app.root, 'runs/sub/steps/000/000002-run_bash.json')) as { checkpoint?: string };
    assert.match(bash.checkpoint ?? '', /^[0-9a-f]{40}$/, 'the command step has a checkpoint');
    const files = await lsTree(app.root, bash.checkpoint!);
    assert.ok(files.has('vendor/lib/added.txt'), 'a new file inside the submodule is in the checkpoint');
    assert.equal(await gitOut(app.root, ['cat-file', 'blob', `${bash.checkpoint}:vendor/lib/lib.js`]), 'export const v = 2;');

    const show = await runCli(['show', 'sub', '2'], { cwd: app.root, env: {} });
    assert.equal(show.code, 0, show.stderr);
    assert.doesNotMatch(show.stdout, /changed no files/);
    assert.match(show.stdout, /vendor\/lib\/lib\.js/);
    assert.match(show.stdout, /-export const v = 1;\n\+export const v = 2;/);
    await assertFsckClean(app.root, 'after a run that edited a submodule');

    // A restore to the start of the run puts the submodule's file back.
    const start = JSON.parse(await journalFile(app.root, 'runs/sub/run.json')) as { startCheckpoint: string };
    const snapshotter = snapshotterFor(app.root);
    const restored = await restoreWorktree(app.root, objectsFor(app.root), start.startCheckpoint, snapshotter.snapshot(), snapshotter.trackedPaths());
    assert.deepEqual(restored.written, ['vendor/lib/lib.js']);
    assert.deepEqual(restored.kept, ['vendor/lib/added.txt'], 'an untracked file the start never had is kept, as anywhere');
    assert.equal(readFileSync(join(app.root, 'vendor/lib/lib.js'), 'utf8'), 'export const v = 1;\n');
    rmSync(join(app.root, 'vendor/lib/added.txt'));
    assert.equal(snapshotterFor(app.root).snapshot().tree, start.startCheckpoint);
  });
});
