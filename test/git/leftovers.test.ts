// Temp files killed writers leave: a child appending through the real journal is SIGKILLed just
// before an fsync or a write (its temp file written or still empty). A later process that opens
// the journal removes the stale ones (writer dead and older than any write takes, or older than
// any writer could still be busy with) and keeps the rest, so git finds nothing but objects.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { DEAD_WRITER_TEMP_MS, STALE_TEMP_MS } from '../../src/git/leftovers.js';
import { checkAfterKill, checkReport, range } from '../helpers/crash-checks.js';
import { gitOut } from '../helpers/git.js';
import { appendInProcess, runAppender, type AppenderOptions } from '../helpers/journal-child.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// Every temp file the journal makes, wherever it makes them.
function temps(gitdir: string): string[] {
  const found: string[] = [];
  const list = (dir: string, pattern: RegExp) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) if (pattern.test(name)) found.push(join(dir, name));
  };
  list(join(gitdir, 'objects'), /^tmp_/);
  for (const fan of readdirSync(join(gitdir, 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n))) list(join(gitdir, 'objects', fan), /^tmp_/);
  list(join(gitdir, 'refs/heads'), /^\./);
  list(join(gitdir, 'savepoint/locks'), /\.(tmp|dead)-/);
  return found.sort();
}

function age(paths: string[], ms: number): void {
  const then = new Date(Date.now() - ms);
  for (const path of paths) utimesSync(path, then, then);
}

describe('temp files left by killed writers', () => {
  it('are removed by a later process once stale, and the run resumes with nothing left behind', async () => {
    const repo = await scratch.repo();
    const gitdir = join(repo.root, '.git');
    const run = 'leftovers';
    const durable = new Set<number>();
    // Killed before each of the first fsyncs (a temp file written, not synced) and writes (empty).
    const kills: AppenderOptions[] = [
      ...range(1, 6).map((k) => ({ dir: repo.root, run, steps: 10, killAtFsync: k, staleLockMs: 250 })),
      ...range(1, 4).map((k) => ({ dir: repo.root, run, steps: 10, killAtWrite: k, staleLockMs: 250 })),
    ];
    for (const options of kills) {
      const report = await runAppender(options);
      assert.equal(report.signal, 'SIGKILL', report.stderr);
      checkReport(report, durable, 'killed mid-write');
      for (const step of report.done) durable.add(step);
    }
    const left = temps(gitdir);
    assert.ok(left.length >= 5, `the kills left temp files: ${left.join(', ')}`);
    assert.ok(left.some((p) => /\/objects\/tmp_(obj|pack|idx)_/.test(p)) && left.some((p) => p.includes('/refs/heads/.')), `objects' and the ref's: ${left.join(', ')}`);

    // Opened at once, nothing is removed yet: a temp this fresh might be a live writer's.
    await JournalStore.open(repo.root);
    assert.deepEqual(temps(gitdir), left);

    // Later: their writers are dead and they are older than any write takes.
    age(left, DEAD_WRITER_TEMP_MS + 5_000);
    // A live writer's temp (this process's pid is live; the name is the journal's) is kept until
    // it is older than any writer could still be busy with.
    const sleeper = spawn('sleep', ['30']);
    const live = join(gitdir, 'objects', `tmp_obj_${sleeper.pid}_0`);
    const ancient = join(gitdir, 'objects', `tmp_obj_${sleeper.pid}_1`);
    writeFileSync(live, 'x');
    writeFileSync(ancient, 'x');
    age([live], DEAD_WRITER_TEMP_MS + 5_000);
    age([ancient], STALE_TEMP_MS + 5_000);
    try {
      await JournalStore.open(repo.root);
      assert.deepEqual(temps(gitdir), [live], 'only the live writer\'s recent temp file is left');
    } finally {
      sleeper.kill('SIGKILL');
    }

    const final = await appendInProcess({ dir: repo.root, run, steps: 10, staleLockMs: 250 }); // the identical command, in this process
    checkReport(final, durable, 'the final run');
    assert.equal(final.finished, true, final.stderr);
    await checkAfterKill(repo.root, run, new Set(range(1, 10)), 'after the final run');
    assert.match(await gitOut(repo.root, ['count-objects', '-v']), /^garbage: 0$/m);
  });
});
