// A throwaway git repository for tests: a fresh directory with `git init`, a committer identity,
// and optional files (committed when asked). Removed again by `remove()` or the test's `after` hook.
//
//   const repo = await createTempRepo({ files: { 'src/a.js': 'x\n' }, commit: true });
//   repo.write('b.txt', 'y'); await repo.git('add', '.'); await repo.remove();
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

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
}

// A new temporary git repository.
export async function createTempRepo({ files = {}, commit = false }: TempRepoOptions = {}): Promise<TempRepo> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'savepoint-test-')));
  const git = async (...args: string[]) => (await execa('git', args, { cwd: root, stdin: 'ignore' })).stdout;
  const write = (path: string, content: string) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return file;
  };
  await git('init', '-q', '-b', 'main');
  await git('config', 'user.name', 'Savepoint Test');
  await git('config', 'user.email', 'test@savepoint.invalid');
  await git('config', 'commit.gpgsign', 'false');
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
    remove: async () => rmSync(root, { recursive: true, force: true }),
  };
}
