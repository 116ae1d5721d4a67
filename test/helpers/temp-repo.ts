// A throwaway git repository for tests: a fresh directory with `git init`, a committer identity,
// and optional files (committed when asked). Removed again by `remove()` or the test's `after` hook.
//
//   const repo = await createTempRepo({ files: { 'src/a.js': 'x\n' }, commit: true });
//   repo.write('b.txt', 'y'); await repo.git('add', '.'); await repo.remove();
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawn } from 'node:child_process';

export interface TempRepo {
  // The repository's root directory (realpath, so it compares equal to what git reports).
  root: string;
  // Writes a file under the root, making its parent directories.
  write(path: string, content: string): string;
  read(path: string): string;
  // Runs git in the root and returns its stdout.
  git(...args: string[]): Promise<string>;
  remove(): Promise<void>;
}

export interface TempRepoOptions {
  files?: Record<string, string>;
  // Commit the initial files (the repository then has a HEAD).
  commit?: boolean;
  // The folder it is made in: the temporary folder (TMPDIR) unless named.
  under?: string;
}

// A new temporary git repository.
export async function createTempRepo({ files = {}, commit = false, under = tmpdir() }: TempRepoOptions = {}): Promise<TempRepo> {
  const root = realpathSync(mkdtempSync(join(under, 'savepoint-test-')));
  const git = (...args: string[]) => runGit(root, args);
  const write = (path: string, content: string) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return file;
  };
  await git('init', '-q', '-b', 'main');
  // What `git config user.name ...`, `user.email ...` and `commit.gpgsign false` would write, written
  // at once (three git processes fewer for every repository a test makes).
  appendFileSync(join(root, '.git', 'config'), '[user]\n\tname = Savepoint Test\n\temail = test@savepoint.invalid\n[commit]\n\tgpgsign = false\n');
  for (const [path, content] of Object.entries(files)) write(path, content);
  if (commit) {
    await git('add', '-A');
    await git('commit', '-q', '--allow-empty', '-m', 'initial');
  }
  return {
    root,
    write,
    read: (path) => readFileSync(join(root, path), 'utf8'),
    git,
    // Retried: a process the test stopped may still be writing its last object as the folder goes.
    remove: async () => rmSync(root, { recursive: true, force: true, maxRetries: 5 }),
  };
}

// git in `root`, stdin empty: its stdout without the final newline; rejects with its stderr when it fails.
function runGit(root: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8').replace(/\r?\n$/, ''));
      reject(new Error(`git ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${Buffer.concat(err).toString('utf8').trim()}`));
    });
  });
}
