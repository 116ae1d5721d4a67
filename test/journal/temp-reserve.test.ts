// The temp files an append's writer creates ahead (temp-reserve.ts): made in the background,
// closed while waiting, opened again by the append that fills them, removed when the writer is
// done, and never trusted once gone or touched. And a whole run through the real journal leaves
// no temp file behind once closed, while every entry it wrote is on a branch fsck finds clean.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync, unlinkSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openJournal } from '../../src/index.js';
import { TempReserve } from '../../src/journal/temp-reserve.js';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// Lets the thread pool's open and close of a refill finish.
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

function reserveIn(dir: string, mode = 0o444): { reserve: TempReserve; names: string[] } {
  const names: string[] = [];
  let n = 0;
  const reserve = new TempReserve(() => {
    const path = join(dir, `tmp_pack_${process.pid}_${n++}`);
    names.push(path);
    return path;
  }, mode);
  return { reserve, names };
}

describe('a temp file reserved ahead', () => {
  it('is created empty and closed, then handed out open for writing with its final mode', async () => {
    const dir = await scratch.dir();
    const { reserve, names } = reserveIn(dir);
    reserve.refill();
    reserve.refill(); // one at a time
    await settle();
    assert.equal(names.length, 1);
    assert.equal(statSync(names[0]!).size, 0);
    const taken = await reserve.take();
    assert.ok(taken, 'the reserved file is handed out');
    assert.equal(taken.path, names[0]);
    writeSync(taken.fd, 'pack bytes');
    closeSync(taken.fd);
    assert.equal(statSync(taken.path).mode & 0o777, 0o444);
    assert.equal(await reserve.take(), undefined, 'nothing is reserved until the next refill');
  });

  it('is waited for when taken while still being made', async () => {
    const dir = await scratch.dir();
    const { reserve } = reserveIn(dir);
    reserve.refill();
    const taken = await reserve.take(); // no settle: the open is still on the thread pool
    assert.ok(taken);
    closeSync(taken.fd);
  });

  it('is not used once removed or written by someone else: the writer makes its own', async () => {
    const dir = await scratch.dir();
    const { reserve, names } = reserveIn(dir);
    reserve.refill();
    await settle();
    unlinkSync(names[0]!);
    assert.equal(await reserve.take(), undefined);
    reserve.refill();
    await settle();
    writeFileSync(names[1]!, 'not ours');
    assert.equal(await reserve.take(), undefined);
    assert.equal(readdirSync(dir).length, 1, 'a file someone else wrote is left to them');
  });

  it('is removed on release, also when released while still being made', async () => {
    const dir = await scratch.dir();
    const { reserve } = reserveIn(dir);
    reserve.refill();
    await settle();
    reserve.release();
    assert.deepEqual(readdirSync(dir), []);
    reserve.refill();
    reserve.release(); // before the open finished
    await settle();
    assert.deepEqual(readdirSync(dir), []);
  });
});

describe('a run through the journal', () => {
  it('uses the files made ahead and leaves none behind once closed', async () => {
    const repo = await scratch.repo();
    const journal = await openJournal({ dir: repo.root, run: 'ahead', task: 'reserve temp files ahead' });
    for (let i = 1; i <= 12; i++) {
      const value = await journal.step('work', { i }, async () => {
        await settle(); // a pause, as a model call or a command makes: the next files are made meanwhile
        return { square: i * i };
      });
      assert.deepEqual(value, { square: i * i });
    }
    const gitdir = join(repo.root, '.git');
    const made = () => readdirSync(join(gitdir, 'objects')).filter((name) => name.startsWith('tmp_'));
    for (let waited = 0; made().length < 2 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = made();
    assert.equal(waiting.length, 2, `the next append's pack and index temp files wait in objects/: ${waiting.join(', ')}`);
    await journal.finish('finished', { final: 'done' });
    journal.close();
    await settle();
    assert.deepEqual(readdirSync(join(gitdir, 'objects')).filter((name) => name.startsWith('tmp_')), []);
    assert.deepEqual(readdirSync(join(gitdir, 'refs/heads')).filter((name) => name.startsWith('.')), []);
    assert.equal((await gitOut(repo.root, ['log', '--format=%s', 'agent-journal'])).split('\n').length, 13);
    await assertFsckClean(repo.root);
    assert.ok(!existsSync(join(gitdir, 'refs/heads/agent-journal.lock')));
  });
});
