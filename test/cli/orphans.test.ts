// Commands orphaned by a crash: run_bash puts each command in a process group of its own, so a
// kill -9 of savepoint leaves it running. The next process to open the run reports it and stops it
// before anything goes live: it never finishes behind the resumed run's back, and
// `--in-flight rerun` does not start a second copy beside it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertFsckClean, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// `--model script:<file>` answering `turns` (what the model is sent is not what this file checks, so
// no HTTP model server, whose first request costs a run about twice the CPU).
function scriptModel(turns: ScriptTurn[]): string[] {
  const file = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return ['--model', `script:${file}`];
}

// The commands savepoint recorded as running for the one run in `root` (none: no file).
function recorded(root: string): Array<{ pgid: number; step: number; description: string }> {
  const dir = join(root, '.git/savepoint/commands');
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')) : [];
  return files.length ? JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) : [];
}

// Whether a process named `name` (its comm) runs in group `pgid`: the command itself has begun.
function groupRuns(pgid: number, name: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[2] === String(pgid) && fields[0] !== 'Z' && stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) return true;
    } catch {
      // exited while we looked
    }
  }
  return false;
}

// Whether any process of group `pgid` still runs (zombies waiting for init to reap them run nothing).
function groupAlive(pgid: number): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[2] === String(pgid) && fields[0] !== 'Z') return true;
    } catch {
      // exited while we looked
    }
  }
  return false;
}

describe('a command left running by a kill -9', { concurrency: true }, () => {
  test('is reported and stopped when the run is opened again; its marker never appears', async () => {
    const marker = join(scratch.dir('savepoint-orphan-'), 'marker');
    const turns: ScriptTurn[] = [{ tools: [{ name: 'run_bash', input: { command: `sleep 30; touch ${marker}` } }] }, { text: 'Done.' }];
    const repo = await scratch.repo();
    // Unconfined: in the bubblewrap sandbox a command dies with savepoint (--die-with-parent), so
    // only a command run with --no-sandbox can be orphaned by a kill -9.
    const args = ['run', '--yes', '--no-sandbox', ...scriptModel(turns), 'sleep then touch'];
    const first = startCli(args, { cwd: repo.root });
    // Recorded, then begun: the group is recorded before the spare shell is handed the command, and
    // a kill between the two leaves a spare that runs nothing (nothing to orphan).
    await waitUntil(
      () => recorded(repo.root).length === 1 && groupRuns(recorded(repo.root)[0]!.pgid, 'sleep'),
      'the command to be recorded and running',
      { child: first },
    );
    const [command] = recorded(repo.root);
    assert.equal(command!.step, 2);
    assert.match(command!.description, /^run_bash "sleep 30/);
    first.kill();
    await first.result;
    assert.ok(groupAlive(command!.pgid), 'the command outlived savepoint (its own process group)');

    const again = await runCli(args, { cwd: repo.root });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`#2 run_bash "sleep 30.*was still running \\(process group ${command!.pgid}\\): stopped it`));
    // Reported before any step: before the replay and the live steps.
    assert.ok(again.stdout.indexOf('was still running') < again.stdout.indexOf('#1 '), again.stdout);
    assert.equal(groupAlive(command!.pgid), false, 'the orphaned group is gone');
    assert.equal(recorded(repo.root).length, 0, 'the record is cleared');
    // Its group is gone (above): nothing is left that could touch the marker later.
    assert.equal(existsSync(marker), false, 'the orphan never touched its marker');
    await assertFsckClean(repo.root);
  });

  test('--in-flight rerun runs the command once more only after the orphan is gone: one copy, not two', async () => {
    const dir = scratch.dir('savepoint-orphan-');
    const log = join(dir, 'log');
    // The first copy takes 30 s, the rerun 1 s: the orphan is still running when the run is opened
    // again however slow the machine (an orphan that had ended is rightly not reported: its
    // processes may linger as zombies, which run nothing).
    const command = `echo start >> ${log}; if [ -e ${dir}/again ]; then sleep 1; else touch ${dir}/again; sleep 30; fi; echo end >> ${log}`;
    const turns: ScriptTurn[] = [{ tools: [{ name: 'run_bash', input: { command } }] }, { text: 'Done.' }];
    const repo = await scratch.repo();
    const args = ['run', '--yes', '--no-sandbox', ...scriptModel(turns), 'log twice?'];
    const first = startCli(args, { cwd: repo.root });
    // Started and recorded (the record is written just after the spawn: a kill in between that
    // instant is the one case this cannot see).
    await waitUntil(() => existsSync(log) && recorded(repo.root).length === 1, 'the command to start and be recorded', { child: first });
    const [orphan] = recorded(repo.root);
    first.kill();
    await first.result;
    const again = await runCli([...args, '--in-flight', 'rerun'], { cwd: repo.root });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /was still running .*stopped it/);
    assert.equal(groupAlive(orphan!.pgid), false, 'the orphan is gone: it will never write its "end"');
    assert.deepEqual(
      readFileSync(log, 'utf8').split('\n').filter(Boolean),
      ['start', 'start', 'end'],
      'the orphan was stopped; only the rerun finished',
    );
  });
});
