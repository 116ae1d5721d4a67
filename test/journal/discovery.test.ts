// Finding the repository as git does, and clear refusals where savepoint cannot write, with the
// real CLI: GIT_DIR and GIT_WORK_TREE are honoured (the journal lands in the repository git uses);
// GIT_DIR naming another repository than the files' own is refused; a read-only .git (a read-only
// bind mount, or permissions for a user who is not root) and a .git/savepoint that cannot be made
// say so in one paragraph; a journal branch checked out in a linked worktree is never moved.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findRepository } from '../../src/git/repository.js';
import { assertFsckClean, gitOut, runGit } from '../helpers/git.js';
import { assertOneParagraph, baseEnv, BIN, runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TASK = 'write b';

// A scripted model that writes one file and answers.
function script(): string {
  const file = join(scratch.dir('savepoint-script-'), 'script.json');
  writeFileSync(file, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'agent\n' } }] }, { text: 'done' }] }));
  return file;
}

const run = (cwd: string, env: Record<string, string | undefined> = {}) => runCli(['run', '--yes', '--model', `script:${script()}`, TASK], { cwd, env });
const hasJournal = async (cwd: string, env: Record<string, string> = {}) => (await runGit(cwd, ['rev-parse', '--verify', '-q', 'refs/heads/agent-journal'], { env })).code === 0;

function assertClear(result: { code: number | null; stdout: string; stderr: string }, code: RegExp): string {
  assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /unexpected error/);
  const message = assertOneParagraph(result.stderr);
  assert.match(message, code);
  return message;
}

describe('GIT_DIR and GIT_WORK_TREE, as git honours them', { concurrency: true }, () => {
  test('a git dir kept apart from its files: the run works and the journal lands in that git dir', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const store = join(scratch.dir('savepoint-gitdir-'), 'store.git');
    renameSync(join(repo.root, '.git'), store);
    const env = { GIT_DIR: store, GIT_WORK_TREE: repo.root };
    const result = await run(repo.root, env);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(await hasJournal(repo.root, env));
    const files = await gitOut(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal'], { env });
    assert.match(files, /worktree\/a\.txt/);
    assert.match(files, /worktree\/b\.txt/);
    await assertFsckClean(store);
    // The library sees what git sees.
    assert.deepEqual(findRepository(repo.root, { ...process.env, ...env }), { root: repo.root, gitdir: store, commonDir: store });
  });

  test('GIT_DIR naming another repository than the files\' own is refused, and neither gets a journal', async () => {
    const mine = await scratch.repo({ 'a.txt': 'a\n' });
    const other = await scratch.repo({ 'other.txt': 'o\n' });
    const result = await run(mine.root, { GIT_DIR: join(other.root, '.git') });
    const message = assertClear(result, /make git use the repository .*\/\.git with the working tree .*, but those files belong to the repository/);
    assert.match(message, /Unset GIT_DIR and GIT_WORK_TREE/);
    assert.equal(await hasJournal(other.root), false);
    assert.equal(await hasJournal(mine.root), false);
    assert.equal(existsSync(join(other.root, '.git', 'savepoint')), false);
  });

  test('GIT_WORK_TREE pointing at another repository\'s files is refused the same way', async () => {
    const mine = await scratch.repo({ 'a.txt': 'a\n' });
    const other = await scratch.repo({ 'other.txt': 'o\n' });
    assertClear(await run(mine.root, { GIT_WORK_TREE: other.root }), /but those files belong to the repository/);
    assert.equal(await hasJournal(mine.root), false);
  });

  test('GIT_DIR set to the repository\'s own git dir (as in a git hook) is fine', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const result = await run(repo.root, { GIT_DIR: '.git' });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(await hasJournal(repo.root));
  });

  test('a bare repository has no working tree: ENOWORKTREE', async () => {
    const dir = scratch.dir('savepoint-bare-');
    await gitOut(dir, ['init', '-q', '--bare', 'b.git']);
    assertClear(await run(join(dir, 'b.git')), /has no working tree/);
  });
});

// ── Where savepoint cannot write ────────────────────────────────────────────────────────────────

const canMount = (() => {
  const dir = scratch.dir('savepoint-mount-probe-');
  const ok = spawnSync('mount', ['--bind', dir, dir]).status === 0;
  if (ok) spawnSync('umount', [dir]);
  return ok;
})();

describe('a git dir savepoint cannot write', { concurrency: true }, () => {
  test('a read-only bind mount of .git: EREADONLYREPO in one paragraph; reading commands still work', { skip: canMount ? false : 'needs root with CAP_SYS_ADMIN for a read-only bind mount' }, async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const gitdir = join(repo.root, '.git');
    spawnSync('mount', ['--bind', gitdir, gitdir]);
    try {
      assert.equal(spawnSync('mount', ['-o', 'remount,ro,bind', gitdir]).status, 0);
      const message = assertClear(await run(repo.root), /cannot write .*\.git\/savepoint \(the file system is mounted read-only\)/);
      assert.match(message, /"savepoint runs", still work/);
      const runs = await runCli(['runs'], { cwd: repo.root });
      assert.equal(runs.code, 0, runs.stderr);
      assert.equal(repo.read('a.txt'), 'a\n');
      assert.ok(!existsSync(join(repo.root, 'b.txt')), 'nothing ran');
    } finally {
      spawnSync('umount', [gitdir]);
    }
  });

  test('.git not writable for the user (run as nobody): EREADONLYREPO, permission denied', async (t) => {
    const probe = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(BIN)})`]);
    if (probe.status !== 0) return t.skip('needs root and setpriv to run the CLI as "nobody", who must be able to read the build');
    const dir = scratch.dir('savepoint-nobody-');
    chmodSync(dir, 0o755);
    const root = join(dir, 'repo');
    mkdirSync(root);
    await gitOut(root, ['init', '-q', '-b', 'main']);
    writeFileSync(join(root, 'a.txt'), 'a\n');
    await gitOut(root, ['add', '-A']);
    await gitOut(root, ['commit', '-q', '-m', 'one']);
    spawnSync('chown', ['-R', 'nobody:nogroup', root]);
    spawnSync('chmod', ['-R', 'a-w', join(root, '.git')]);
    const file = script();
    chmodSync(join(file, '..'), 0o755);
    const child = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, BIN, 'run', '--yes', '--model', `script:${file}`, TASK], {
      cwd: root,
      env: { ...baseEnv(), HOME: dir },
      encoding: 'utf8',
    });
    spawnSync('chmod', ['-R', 'u+w', join(root, '.git')]);
    assertClear({ code: child.status, stdout: child.stdout, stderr: child.stderr }, /cannot write .*\.git\/savepoint \(permission denied\)/);
  });

  test('a file where .git/savepoint must be: EREADONLYREPO, a file is in the way', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    writeFileSync(join(repo.root, '.git', 'savepoint'), 'not a directory\n');
    assertClear(await run(repo.root), /cannot write .*\.git\/savepoint \(a file is in the way where a directory must be\)/);
    assert.equal(await hasJournal(repo.root), false);
  });
});

describe('a journal branch checked out in a worktree', () => {
  test('is never moved: EJOURNALCHECKEDOUT names the worktree, the branch and that worktree are untouched', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    assert.equal((await run(repo.root)).code, 0);
    const linked = join(scratch.dir('savepoint-linked-'), 'journal');
    await gitOut(repo.root, ['worktree', 'add', '-q', linked, 'agent-journal']);
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    const status = await gitOut(linked, ['status', '--porcelain']);
    const result = await runCli(['run', '--yes', '--model', `script:${script()}`, 'another task'], { cwd: repo.root });
    const message = assertClear(result, /The branch agent-journal is checked out in the worktree .*journal, and savepoint refuses to move it/);
    assert.match(message, /git -C .* switch/);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'the branch did not move');
    assert.equal(await gitOut(linked, ['status', '--porcelain']), status, "that worktree's files and index match its HEAD");
    await assertFsckClean(repo.root);
  });
});
