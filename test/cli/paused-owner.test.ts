// A paused owner never changes the run that took it over. A real `savepoint run` is stopped with
// SIGSTOP in the middle of a step (waiting for the model's answer, or for its run_bash command) for
// longer than its short lease (SAVEPOINT_RUN_LOCK_LEASE_MS); a second `savepoint run` of the identical
// command takes the run over and finishes it; then the first gets SIGCONT. It must stop with one
// clear paragraph and exit 1, having recorded nothing: the journal's tip, every file on it and every
// savepoint ref are what the second left, `git fsck --strict` is clean, and the identical command
// afterwards replays the finished run with no model call. Once with both processes in one pid
// namespace (the stopped owner is seen stopped in /proc), once with the first in a pid namespace of
// its own (`unshare --pid --fork --mount-proc`: only its lease can be judged).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { assertNoStack, assertOneParagraph, fakeEnv, LIVE, runCli, startCli, stepLines, waitUntil, type CliProcess } from '../helpers/cli.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const LEASE_MS = 600;
const TASK = 'make a.txt, then run the command';
const UNSHARE = ['unshare', '--pid', '--fork', '--mount-proc'];
const canUnshare = process.getuid?.() === 0 && spawnSync(UNSHARE[0]!, [...UNSHARE.slice(1), 'true']).status === 0;

type Phase = 'model call' | 'run_bash command';

// The pid of the savepoint process itself: the CLI child, or unshare's child when started under it.
function savepointPid(cli: CliProcess, own: boolean): number {
  if (!own) return cli.pid;
  const children = readFileSync(`/proc/${cli.pid}/task/${cli.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  assert.equal(children.length, 1, 'unshare --fork has one child, savepoint');
  return Number(children[0]);
}

// Everything on the journal a process could change: the tip, every path with its object, every savepoint ref.
async function journalState(root: string): Promise<{ tip: string; files: string; refs: string }> {
  return {
    tip: await gitOut(root, ['rev-parse', 'agent-journal']),
    files: await gitOut(root, ['ls-tree', '-r', 'agent-journal']),
    refs: await gitOut(root, ['for-each-ref', '--format=%(refname) %(objectname)']),
  };
}

async function pausedTakeOver(phase: Phase, own: boolean): Promise<void> {
  const repo = await scratch.repo({ 'README.md': '# project\n' });
  const command = phase === 'run_bash command' ? 'sleep 120; echo slept' : 'echo ran';
  const turns = [{ tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] }, { tools: [{ name: 'run_bash', input: { command } }] }, { text: 'All done.' }];
  // The first process's second model call is held until the test lets it go; every other call is answered at once.
  let release: () => void = () => {};
  const answer = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const fake = await startFakeAnthropic({
    turns,
    gate: (index) => {
      if (phase !== 'model call' || index !== 1 || holding) return undefined;
      holding = true;
      return answer;
    },
  });
  scratch.defer(() => fake.close());
  scratch.defer(release);
  const env = fakeEnv(fake, { SAVEPOINT_RUN_LOCK_LEASE_MS: String(LEASE_MS) });
  const args = ['run', '--yes', '--no-sandbox', TASK];

  const first = startCli(args, { cwd: repo.root, env, ...(own ? { under: UNSHARE } : {}) });
  scratch.defer(() => first.kill());
  const locks = join(repo.root, '.git/savepoint/locks');
  const commands = join(repo.root, '.git/savepoint/commands');
  if (phase === 'model call') await waitUntil(() => holding, 'the first process waiting for its second model answer', { child: first });
  else await waitUntil(() => existsSync(commands) && readdirSync(commands).some((name) => name.endsWith('.json')), 'the first process running its command', { child: first });
  const pid = savepointPid(first, own);
  process.kill(pid, 'SIGSTOP');
  scratch.defer(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone
    }
  });
  // The run's lock and the working tree's (_worktree.lock): both must have missed the lease.
  const held = readdirSync(locks).filter((name) => name.endsWith('.lock')).map((name) => join(locks, name));
  assert.equal(held.length, 2, `the run's and the working tree's locks: ${held.join(', ')}`);
  await waitUntil(() => held.every((lock) => !existsSync(lock) || Date.now() - statSync(lock).mtimeMs > LEASE_MS * 2), 'the stopped process to miss its lease');

  const second = await runCli(args, { cwd: repo.root, env });
  assert.equal(second.code, 0, `the second process takes the run over and finishes it:\n${second.stdout}\n${second.stderr}`);
  assert.match(second.stdout, /All done\./);
  const finished = await journalState(repo.root);
  const calls = fake.requests.length;

  process.kill(pid, 'SIGCONT');
  release();
  const woken = await first.result;
  assert.equal(woken.code, 1, `the woken process stops with exit 1:\n${woken.stdout}\n${woken.stderr}`);
  const message = assertOneParagraph(woken.stderr);
  assert.match(message, /another savepoint process took this run over while this one was paused/i);
  assertNoStack(woken.stderr);
  assert.deepEqual(await journalState(repo.root), finished, 'the woken process recorded nothing: tip, files and refs are as the second left them');
  assert.equal(fake.requests.length, calls, 'the woken process asked the model nothing more');
  assert.equal(repo.read('a.txt'), 'one\n');
  await assertFsckClean(repo.root);

  const again = await runCli(args, { cwd: repo.root, env });
  assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
  const lines = stepLines(again.stdout);
  assert.ok(lines.length >= 5, `every step is shown:\n${again.stdout}`);
  assert.ok(lines.every((line) => line.mode === 'replayed'), `the finished run replays fully:\n${again.stdout}`);
  assert.ok(!again.stdout.includes(LIVE));
  assert.equal(fake.requests.length, calls, 'replaying the finished run calls no model');
  assert.deepEqual(await journalState(repo.root), finished, 'replaying a finished run writes nothing');
}

describe('a run stopped past its lease and taken over', { concurrency: true }, () => {
  test('paused in a model call, same pid namespace: the woken process stops and records nothing', () => pausedTakeOver('model call', false));
  test('paused in a model call, its own pid namespace: the woken process stops and records nothing', { skip: canUnshare ? false : 'needs root and unshare --pid --fork --mount-proc to make a pid namespace' }, () => pausedTakeOver('model call', true));
  test('paused while its run_bash command runs: the new owner stops the command, the woken process records nothing', () => pausedTakeOver('run_bash command', false));
  // The new owner cannot reach a command in another pid namespace: the woken process finds its lock
  // taken and stops the command itself (else this test waits for its two minutes of sleep and fails).
  test('paused while its run_bash command runs, its own pid namespace: woken, it stops its command itself and records nothing', { skip: canUnshare ? false : 'needs root and unshare --pid --fork --mount-proc to make a pid namespace' }, () => pausedTakeOver('run_bash command', true));
});
