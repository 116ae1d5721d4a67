// The user's HEAD commit, read the way git resolves it (a detached id, or a symbolic ref followed
// into loose or packed refs). A run records it as its base, so a fresh clone can tell it is a clean
// checkout of where the run began.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRef } from './refs.js';
import type { Repository } from './repository.js';

/** The commit HEAD points at in `repo`, or undefined on an unborn branch or an unreadable HEAD. */
export function readHeadCommit(repo: Pick<Repository, 'gitdir' | 'commonDir'>): string | undefined {
  try {
    const head = readFileSync(join(repo.gitdir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    return ref ? readRef(repo.commonDir, ref) : undefined;
  } catch {
    return undefined;
  }
}

/** The branch HEAD is on (`main`), or null when HEAD is detached or unreadable. */
export function readHeadBranch(repo: Pick<Repository, 'gitdir'>): string | null {
  try {
    const head = readFileSync(join(repo.gitdir, 'HEAD'), 'utf8').trim();
    return /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? null;
  } catch {
    return null;
  }
}
