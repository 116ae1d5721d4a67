// `savepoint demo`, the seed chapter's lecture demo, run for real: a scripted agent killed at lap 4,
// the identical command run again, laps 1–3 (steps 1–6) replayed and lap 4 (step 7) live.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertFsckClean, assertStepModes, gitOut, runCli, startCli, type CliResult } from '../helpers/cli.js';
import { tmpdir } from 'node:os';
import { processesIn } from '../helpers/processes.js';
import { spawnSync } from 'node:child_process';

// A pid namespace needs root and util-linux's unshare.
const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

// The demo's two runs, split at the second `$ savepoint run` it prints.
function runs(stdout: string): [string, string] {
  const parts = stdout.split(/^\$ savepoint run .*$/m);
  assert.equal(parts.length, 3, `the demo shows two runs:\n${stdout}`);
  return [parts[1]!, parts[2]!];
}

function repositoryOf(result: CliResult): string {
  const match = /A small repository with a failing test: (\S+)/.exec(result.stdout);
  assert.ok(match, result.stdout);
  return match[1]!;
}

describe('savepoint demo', { concurrency: true }, () => {
  test('kills the run at lap 4, then replays steps 1-6 from the journal and goes live at step 7, with no API key', async () => {
    const demo = await runCli(['demo'], { cwd: tmpdir(), timeoutMs: 120_000 });
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    const [killed, resumed] = runs(demo.stdout);
    const before = assertStepModes(killed, 0, 'the first run');
    assert.equal(before.length, 6, 'the first run died after laps 1-3');
    assert.match(demo.stdout, /kill -9 \d+/);
    const after = assertStepModes(resumed, 6, 'the resumed run');
    assert.ok(after.length >= 7);
    assert.match(resumed, /Final answer/);
    assert.match(resumed, /Replayed 6 steps from the journal/);
    // The demo's model is scripted: it calls no API and costs nothing, so no estimate is shown.
    assert.match(resumed, /\(scripted model: no cost; live this time/);
    assert.doesNotMatch(demo.stdout, /estimated|\$\d|<\$|\b0 commands\b/);
    assert.match(demo.stdout, /git log --oneline agent-journal/);
    assert.equal(existsSync(dirname(repositoryOf(demo))), false, 'the temporary repository is removed without --keep');
  });

  test('with --keep leaves a repository whose bug is fixed and whose journal is sound', async () => {
    const demo = await runCli(['demo', '--keep'], { cwd: tmpdir(), timeoutMs: 120_000 });
    const repo = repositoryOf(demo);
    try {
      assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
      assert.match(readFileSync(join(repo, 'cart.js'), 'utf8'), /let i = 0;/);
      await assertFsckClean(repo);
    } finally {
      rmSync(dirname(repo), { recursive: true, force: true });
    }
  });

  test('--chapter past: a hand edit between the crash and the resume; drift names config.py, the replayed read returns what was recorded', async () => {
    const demo = await runCli(['demo', '--chapter', 'past', '--keep'], { cwd: tmpdir(), timeoutMs: 120_000 });
    const repo = chapterRepository(demo);
    try {
      assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
      assert.match(demo.stdout, /savepoint: The working tree differs from what run \S+ recorded when it started: modified config\.py\./, 'drift names the file');
      assert.match(demo.stdout, /#2\s+REPLAYED \(from journal\)\s+read_file config\.py/);
      assert.match(demo.stdout, /Why this is right\./);
      assertEndsOnGitLog(demo.stdout);
      const log = await gitOut(repo, ['log', '--format=%s', 'agent-journal']);
      assert.equal(log.split('\n').filter((s) => / #2 read_file config\.py/.test(s)).length, 1, 'the first read was recorded once, never re-run');
      const read = JSON.parse(await gitOut(repo, ['show', `agent-journal:runs/${runId(demo)}/steps/000/000002-read_file.json`])) as { result: { output: string } };
      assert.match(read.result.output, /TIMEOUT = 30/, 'the journal keeps what the model read then');
      assert.match(readFileSync(join(repo, 'config.py'), 'utf8'), /TIMEOUT = 90/, 'the live steps saw the hand edit');
      await assertFsckClean(repo);
    } finally {
      rmSync(dirname(repo), { recursive: true, force: true });
    }
  });

  test('--chapter edge: killed mid-command; on resume the model is told the outcome is unknown and checks; the journal shows the intent with no result', async () => {
    const demo = await runCli(['demo', '--chapter', 'edge', '--keep'], { cwd: tmpdir(), timeoutMs: 120_000 });
    const repo = chapterRepository(demo);
    try {
      assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
      assert.match(demo.stdout, /#2\s+NOT RUN \(was in flight\)\s+run_bash .*outcome unknown/);
      assert.match(demo.stdout, /#4\s+LIVE \(running now\)\s+read_file publish\.log/, 'the model checks for itself');
      // The kill took the command's whole process group: the resume finds nothing of it running.
      assert.doesNotMatch(demo.stdout, /was still running/, 'the chapter does not contradict its "died"');
      // Before the resume, the journal's last word on #2 is its intent.
      const [beforeResume] = demo.stdout.split('Same command again');
      assert.match(beforeResume!, /#2 run_bash .*\(started\)\n[0-9a-f]+ \S+ #1 model turn 1/);
      assertEndsOnGitLog(demo.stdout);
      // The kill took the command too (as a power cut would): nothing of it runs in the repository any
      // more (its `sleep 4` would write "published" after), so nothing finishes it behind our back.
      assert.deepEqual(processesIn(realpathSync(repo)), [], 'a process of the killed command runs on');
      assert.equal(readFileSync(join(repo, 'publish.log'), 'utf8'), 'publishing v1.2\n', 'the command was not run again, nor finished after the kill');
      const subjects = await gitOut(repo, ['log', '--format=%s', 'agent-journal']);
      assert.match(subjects, /#2 run_bash .* -> outcome unknown: started before a crash, not re-run/);
      await assertFsckClean(repo);
    } finally {
      rmSync(dirname(repo), { recursive: true, force: true });
    }
  });

  // The demo kills the CLI and its command's process group; the group's processes are orphans, left
  // for PID 1 to reap. In a container without an init, PID 1 reaps slowly, so when the same command
  // runs again the group holds only zombies. Here the demo runs as PID 1 of a pid namespace of its
  // own (`unshare --pid --fork --mount-proc`): node reaps only the children it spawned, so the killed
  // command's processes stay zombies for as long as the demo runs, on any machine.
  test('--chapter edge with a PID 1 that does not reap: the killed command left only zombies, and the resume does not call it still running', { skip: canUnshare ? false : 'needs root and `unshare --pid --fork --mount-proc`' }, async () => {
    const cli = startCli(['demo', '--chapter', 'edge'], { cwd: tmpdir(), timeoutMs: 120_000, under: ['unshare', '--pid', '--fork', '--mount-proc'] });
    let zombies = 0;
    let ended = false;
    const result = cli.result.finally(() => (ended = true));
    while (!ended) {
      zombies = Math.max(zombies, zombiesOf(childrenOf(cli.pid)[0]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const demo = await result;
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.ok(zombies > 0, 'the killed command\'s processes waited as zombies for the demo (PID 1) to reap them');
    assert.match(demo.stdout, /kill -9 \d+: the process and its publish command died/);
    assert.doesNotMatch(demo.stdout, /was still running|stopped it \(SIGTERM\)|needed SIGKILL/, 'zombies run nothing');
    assert.match(demo.stdout, /#2\s+NOT RUN \(was in flight\)\s+run_bash .*outcome unknown/);
  });
});

// The pids of `pid`'s children (from the host's /proc).
function childrenOf(pid: number | undefined): number[] {
  if (!pid) return [];
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

// How many of `pid`'s children are zombies (state Z): ended, and not reaped by it.
function zombiesOf(pid: number | undefined): number {
  return childrenOf(pid).filter((child) => {
    try {
      const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
    } catch {
      return false;
    }
  }).length;
}

function chapterRepository(result: CliResult): string {
  const match = /Repository: (\S+)/.exec(result.stdout);
  assert.ok(match, result.stdout);
  return match[1]!;
}

function runId(result: CliResult): string {
  return /savepoint {2}run (\S+)/.exec(result.stdout)![1]!;
}

// The chapter's last lines are `git log --oneline agent-journal`, down to the run's first step.
function assertEndsOnGitLog(stdout: string): void {
  const tail = stdout.trimEnd().split('\n');
  const at = tail.lastIndexOf('$ git log --oneline agent-journal');
  assert.ok(at > 0, stdout);
  const log = tail.slice(at + 1);
  assert.ok(log.length >= 3 && log.every((line) => /^[0-9a-f]{7,} /.test(line)), `ends on the git log:\n${log.join('\n')}`);
  assert.match(log.at(-1)!, /#1 model turn 1/);
}

