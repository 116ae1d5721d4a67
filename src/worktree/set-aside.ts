// Before a restore overwrites or removes a file, the file is set aside where the person can get it
// back: a commit of exactly those files, as they are in the working tree, under
// `refs/savepoint/saved/<run>/<n>` (HEAD its parent, so `git show` reads it against the person's
// branch). The files go in through git's own `add` on an index of their own, as `git stash` saves
// them: clean filters applied, modes and symbolic links kept, the person's index never touched.
// `git checkout <ref> -- :/` writes them back (only the files the ref holds; nothing is deleted).
import { outputSync } from '../os/processes.js';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { buildOwnGit, type Repository } from '../git/repository.js';
import { readHeadCommit, readRef } from '../git/refs.js';
import { pathToBytes } from '../os/path-bytes.js';
import { unlinkQuietly } from '../os/durable-file.js';
import { SetAsideError } from '../errors/index.js';

/** Files set aside before a restore: the ref that holds them, and how to get them back. */
export interface SetAside {
  /** `refs/savepoint/saved/<run>/<n>`. */
  ref: string;
  commit: string;
  /** The files it holds, as the working tree names them. */
  files: string[];
  /** The command that writes them back into the working tree. */
  command: string;
}

// The journal's own identity: these commits are written by savepoint, not by the person.
const IDENTITY = {
  GIT_AUTHOR_NAME: 'savepoint',
  GIT_AUTHOR_EMAIL: 'savepoint@localhost',
  GIT_COMMITTER_NAME: 'savepoint',
  GIT_COMMITTER_EMAIL: 'savepoint@localhost',
};

/** The first free `refs/savepoint/saved/<run>/<n>` (a ref name's part may not end with "."). */
function freeRef(commonDir: string, run: string): string {
  const base = `refs/savepoint/saved/${run.endsWith('.') ? `${run}_` : run}`;
  for (let n = 1; ; n++) if (readRef(commonDir, `${base}/${n}`) === undefined) return `${base}/${n}`;
}

/**
 * Commits `paths` of the working tree (each an existing file, symbolic link included) to a new ref
 * under refs/savepoint/saved/ and returns it. Throws SetAsideError when git cannot save them: the
 * caller then writes nothing.
 */
export function setAsideFiles(repo: Repository, run: string, paths: readonly string[], subject: string): SetAside {
  const index = join(repo.gitdir, `savepoint-set-aside-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  const git = (args: string[], input?: Buffer): string => {
    const own = buildOwnGit(args);
    return outputSync('git', own.args, {
      cwd: repo.root,
      env: { ...own.env, ...IDENTITY, GIT_INDEX_FILE: index },
      input,
      maxBuffer: 1 << 30,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
      .toString('utf8')
      .trim();
  };
  try {
    // Each name as its bytes, NUL-separated and literal: no pathspec magic, any byte a name may hold.
    const names = Buffer.concat(paths.flatMap((path) => [pathToBytes(path), Buffer.of(0)]));
    git(['--literal-pathspecs', 'add', '--force', '--pathspec-from-file=-', '--pathspec-file-nul'], names);
    const tree = git(['write-tree']);
    const head = readHeadCommit(repo.gitdir, repo.commonDir);
    const commit = git(['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', subject]);
    // Created, never moved: a ref another process made meanwhile makes this one take the next number.
    for (let tries = 0; ; tries++) {
      const ref = freeRef(repo.commonDir, run);
      try {
        git(['update-ref', ref, commit, '0'.repeat(40)]);
        return { ref, commit, files: [...paths], command: `git checkout ${ref} -- :/` };
      } catch (error) {
        if (tries >= 5) throw error;
      }
    }
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new SetAsideError(paths.length, stderr || (error as Error).message);
  } finally {
    unlinkQuietly(index);
  }
}
