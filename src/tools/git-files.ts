// The file set list_files and search work on, as git sees it: tracked files plus untracked ones that
// are not ignored. Both ask git directly, so .gitignore, .git/info/exclude and core.excludesFile apply.
import { statSync } from 'node:fs';
import { buildOwnGit } from '../git/repository.js';
import { runProcess } from '../os/processes.js';
import { resolveInRepo, toRepoRelative } from './path-utils.js';

// Options that make git's output the same whatever the user's config says.
const STABLE_GIT = ['-c', 'core.quotePath=false', '--literal-pathspecs', '--no-pager'];

/** Runs git in `root` and returns its stdout; an exit code outside `okExitCodes` throws with git's message. */
export async function runGit(root: string, args: string[], okExitCodes = [0]): Promise<{ stdout: string; exitCode: number }> {
  const git = buildOwnGit([...STABLE_GIT, ...args]);
  const result = await runProcess('git', git.args, { cwd: root, env: git.env, maxBuffer: 256 * 1024 * 1024 });
  const exitCode = result.code;
  if (exitCode === null || !okExitCodes.includes(exitCode)) {
    const why = result.overflow
      ? 'its output passed 256 MB'
      : (result.error?.message ?? (result.signal ? `killed by ${result.signal}` : `exit ${exitCode}`));
    throw new Error(`git ${args[0]} failed: ${result.stderr.toString('utf8').trim() || why}`);
  }
  return { stdout: result.stdout.toString('utf8'), exitCode };
}

/**
 * The git pathspec for a tool's optional `path`: nothing for the whole repository, else the path
 * relative to the root. Throws for a path outside the repository or one that does not exist.
 */
export function pathspecFor(root: string, path: string | undefined): { pathspec: string[]; shown: string } {
  if (path === undefined || path === '' || path === '.') return { pathspec: [], shown: '.' };
  const absolute = resolveInRepo(root, path);
  statSync(absolute);
  const shown = toRepoRelative(root, absolute);
  return { pathspec: shown === '.' ? [] : ['--', shown], shown };
}
