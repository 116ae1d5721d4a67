// The branch the user's HEAD is on, recorded with a run so that a finished run from another branch
// is not silently replayed for "the same task" here. (The HEAD commit: refs.ts, readHeadCommit.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Repository } from './repository.js';

/** The branch HEAD is on (`main`), or null when HEAD is detached or unreadable. */
export function readHeadBranch(repo: Pick<Repository, 'gitdir'>): string | null {
  try {
    const head = readFileSync(join(repo.gitdir, 'HEAD'), 'utf8').trim();
    return /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? null;
  } catch {
    return null;
  }
}
