// findRepository asks git every time, so no answer kept for the process can go stale (a .git
// removed or made anew, another GIT_DIR); a run asks once for itself and passes the answer down
// (its journal store's repository: checkpoints, the sandbox's git directories), so a run asks git
// where its repository is no more often for ten commands than for one. The git it runs is counted
// by a wrapper on PATH.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NotARepositoryError } from '../../src/index.js';
import { findRepository } from '../../src/git/repository.js';
import { runGit } from '../helpers/git.js';
import { runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// An environment whose `git` is a wrapper that logs the arguments of each run, and how many runs
// asked where the repository is (`git rev-parse ... --show-toplevel`, findRepository's question).
function countingGit(): { env: NodeJS.ProcessEnv; path: string; runs: () => number; discoveries: () => number } {
  const bin = scratch.dir('savepoint-gitcount-');
  const log = join(bin, 'runs.log');
  writeFileSync(log, '');
  const real = (process.env.PATH ?? '').split(':').filter(Boolean).join(':');
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nPATH='${real}' exec git "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const path = `${bin}:${real}`;
  return { env: { ...process.env, PATH: path }, path, runs: () => lines().length, discoveries: () => lines().filter((line) => line.includes('--show-toplevel')).length };
}

describe('findRepository asks git each time', () => {
  it('the answer is git\'s of now: a .git removed (NotARepositoryError) or made anew, another GIT_DIR, a directory below', async () => {
    const repo = await scratch.repo();
    const git = countingGit();
    assert.deepEqual(findRepository(repo.root, git.env), { root: repo.root, gitdir: join(repo.root, '.git'), commonDir: join(repo.root, '.git') });
    rmSync(join(repo.root, '.git'), { recursive: true });
    assert.throws(() => findRepository(repo.root, git.env), NotARepositoryError);
    assert.equal((await runGit(repo.root, ['init', '-q'])).code, 0);
    assert.equal(findRepository(repo.root, git.env).gitdir, join(repo.root, '.git'));
    const withGitDir = { ...git.env, GIT_DIR: join(repo.root, '.git') };
    assert.equal(findRepository(repo.root, withGitDir).root, repo.root); // and the files' own, to compare
    const below = join(repo.root, 'src');
    mkdirSync(below);
    assert.equal(findRepository(below, git.env).root, repo.root);
    assert.equal(git.runs(), 1 + 1 + 1 + 2 + 1);
  });
});

describe('one handle per run', () => {
  it('a run with five commands, and its replay, each ask git where the repository is at most twice (the settings, the run)', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const commands = ['ls', 'cat a.txt', 'echo b > b.txt', 'ls', 'wc -l a.txt'];
    const script = join(scratch.dir('savepoint-script-'), 'model.json');
    writeFileSync(script, JSON.stringify({ turns: [...commands.map((command) => ({ text: 'Next.', tools: [{ name: 'run_bash', input: { command } }] })), { text: 'Done.' }] }));
    const git = countingGit();
    const args = ['run', '--yes', '--model', `script:${script}`, 'run five commands'];
    const live = await runCli(args, { cwd: repo.root, env: { PATH: git.path } });
    assert.equal(live.code, 0, live.stdout + live.stderr);
    assert.match(live.stdout, /Done\./);
    assert.ok(git.discoveries() <= 2, `a live run of five commands asked ${git.discoveries()} times`);
    const before = git.discoveries();
    const replay = await runCli(args, { cwd: repo.root, env: { PATH: git.path } });
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.ok(git.discoveries() - before <= 2, `its replay asked ${git.discoveries() - before} times`);
  });
});
