// This machine's side of a run in a git repository (RunLocal): the run lock and the records of its
// commands under the common git dir, the pending ref that keeps a tree from gc, HEAD.
import { assertJournalWritable, type Repository } from '../git/repository.js';
import { readHeadBranch, readHeadCommit } from '../git/refs.js';
import { clearLiveCommand, recordLiveCommand, stopOrphanedCommands, type OrphanReport } from '../locks/live-commands.js';
import { acquireRunLock, type RunLock } from '../locks/run-lock.js';
import type { RunLocal } from './journal-storage.js';
import { holdPendingTree, releasePendingTree } from './pending.js';

/** A run's local side in `repo` (see RunLocal). */
export class GitRunLocal implements RunLocal {
  constructor(private readonly repo: Repository) {}

  get worktree(): string {
    return this.repo.root;
  }

  headCommit(): string | undefined {
    return readHeadCommit(this.repo.gitdir, this.repo.commonDir);
  }

  headBranch(): string | null {
    return readHeadBranch(this.repo);
  }

  assertWritable(): void {
    assertJournalWritable(this.repo);
  }

  lock(run: string): RunLock {
    return acquireRunLock(this.repo.commonDir, run);
  }

  stopOrphans(run: string): Promise<OrphanReport[]> {
    return stopOrphanedCommands(this.repo.commonDir, run);
  }

  trackCommand(run: string, pgid: number, step: number, description: string, outlivesStep: boolean): void {
    recordLiveCommand(this.repo.commonDir, run, pgid, step, description, outlivesStep);
  }

  untrackCommand(run: string, pgid: number): void {
    clearLiveCommand(this.repo.commonDir, run, pgid);
  }

  keepTree(run: string, tree: string): Promise<void> {
    return holdPendingTree(this.repo.commonDir, run, tree);
  }

  releaseTree(run: string): Promise<void> {
    return releasePendingTree(this.repo.commonDir, run);
  }
}
