/**
 * Makes `root` (created) a repository with one commit of a README, the committer set in its config:
 * a repository on a file system a test mounted (a small tmpfs, one remounted read-only).
 */
export async function createRepoAt(root: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  await gitOut(root, ['init', '-q', '-b', 'main']);
  await gitOut(root, ['config', 'user.name', 'Savepoint Test']);
  await gitOut(root, ['config', 'user.email', 'test@savepoint.invalid']);
  writeFileSync(join(root, 'README.md'), '# project\n');
  await gitOut(root, ['add', '-A']);
  await gitOut(root, ['commit', '-q', '-m', 'initial']);
}

// The git CLI as the independent judge of the journal: fsck, log, ls-tree, refs, and plumbing to
// hand-edit the branch the way a user (or a bad tool) could. Every command runs with a committer
// identity in its environment, so CI machines without a global git identity work too.
//
//   await assertFsckClean(repo.root);
//   const subjects = await journalSubjects(repo.root);
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const GIT_IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'Savepoint Test',
  GIT_AUTHOR_EMAIL: 'test@savepoint.invalid',
  GIT_COMMITTER_NAME: 'Savepoint Test',
  GIT_COMMITTER_EMAIL: 'test@savepoint.invalid',
};

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

// Runs git in `cwd` and reports its exit code and output; never throws for a non-zero exit.
export function runGit(cwd: string, args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      { cwd, env: { ...process.env, ...GIT_IDENTITY_ENV, ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: error ? (error.code as unknown as number) : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
    else child.stdin?.end();
  });
}

// Runs git and returns its stdout without the final newline; a non-zero exit fails the test.
export async function gitOut(cwd: string, args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<string> {
  const result = await runGit(cwd, args, options);
  assert.equal(result.code, 0, `git ${args.join(' ')} failed in ${cwd} (exit ${result.code}):\n${result.stderr}${result.stdout}`);
  return result.stdout.replace(/\n$/, '');
}

// `git fsck --strict` exits 0 and says nothing but "dangling ..." lines: no error, no warning about
// a broken ref, no "bad sha1 file" garbage. Dangling objects (a crashed append leaves them) and
// notices (an unborn HEAD in a bare repository) are fine.
export async function assertFsckClean(cwd: string, context = ''): Promise<void> {
  const result = await runGit(cwd, ['fsck', '--strict', '--no-progress']);
  const complaints = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^dangling \w+ [0-9a-f]{40}$/.test(line) && !/^(Checking |notice: )/.test(line));
  assert.equal(result.code, 0, `git fsck --strict failed${context ? ` (${context})` : ''}:\n${result.stderr}${result.stdout}`);
  assert.deepEqual(complaints, [], `git fsck --strict complained${context ? ` (${context})` : ''}`);
}

// The journal's commit subjects, newest first.
export async function journalSubjects(cwd: string, ref = 'agent-journal'): Promise<string[]> {
  const out = await gitOut(cwd, ['log', '--format=%s', ref]);
  return out === '' ? [] : out.split('\n');
}

export async function commitCount(cwd: string, ref = 'agent-journal'): Promise<number> {
  return Number(await gitOut(cwd, ['rev-list', '--count', ref]));
}

// Every file path on the branch (under `path`, when given).
export async function journalFiles(cwd: string, path?: string, ref = 'agent-journal'): Promise<string[]> {
  const out = await gitOut(cwd, ['ls-tree', '-r', '--name-only', ref, ...(path ? ['--', path] : [])]);
  return out === '' ? [] : out.split('\n');
}

// The text of one file on the branch.
export function journalFile(cwd: string, path: string, ref = 'agent-journal'): Promise<string> {
  return gitOut(cwd, ['show', `${ref}:${path}`]);
}

// Every ref name git sees (`refs/heads/main`, ...).
export async function refNames(cwd: string): Promise<string[]> {
  const out = await gitOut(cwd, ['for-each-ref', '--format=%(refname)']);
  return out === '' ? [] : out.split('\n');
}

// Replaces (or adds) files on the branch with plain git plumbing, in a temporary index so the
// user's index is untouched: hash-object, update-index, write-tree, commit-tree, update-ref.
export async function rewriteJournalFiles(cwd: string, files: Record<string, string>, message = 'hand edit', ref = 'refs/heads/agent-journal'): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'savepoint-index-'));
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  try {
    await gitOut(cwd, ['read-tree', ref], { env });
    for (const [path, content] of Object.entries(files)) {
      const blob = await gitOut(cwd, ['hash-object', '-w', '--stdin'], { input: content });
      await gitOut(cwd, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
    }
    const tree = await gitOut(cwd, ['write-tree'], { env });
    const parent = await gitOut(cwd, ['rev-parse', ref]);
    const commit = await gitOut(cwd, ['commit-tree', tree, '-p', parent, '-m', message]);
    await gitOut(cwd, ['update-ref', ref, commit, parent]);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// What a user sees of their own checkout: HEAD, the index (with conflict stages), the status.
export async function userState(cwd: string): Promise<{ head: string; symbolic: string; index: string; status: string }> {
  return {
    head: await gitOut(cwd, ['rev-parse', 'HEAD']),
    symbolic: (await runGit(cwd, ['symbolic-ref', '-q', 'HEAD'])).stdout.trim(),
    index: await gitOut(cwd, ['ls-files', '--stage']),
    status: await gitOut(cwd, ['status', '--porcelain=v1', '--untracked-files=all']),
  };
}
