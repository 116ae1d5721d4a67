// A run's run.json as the valve writes it: made when the run's first entry is written, then the same
// record with each process's attempt, its status and what the run was given added.
import { hostname } from 'node:os';
import { RUN_FORMAT, type RunConfig, type RunRecord, type RunSandbox } from '../journal/entry.js';
import { readHeadBranch } from '../git/head.js';
import { readHeadCommit } from '../git/refs.js';
import type { Repository } from '../git/repository.js';
import type { OpenJournalOptions } from './step-types.js';

/** The run.json of a run about to get its first entry: its task, model, base commit, where it began, its lineage. */
export function newRunRecord(run: string, options: OpenJournalOptions, repo: Repository, now: string): RunRecord {
  return {
    format: RUN_FORMAT,
    id: run,
    task: options.task ?? '',
    model: options.model,
    baseCommit: 'baseCommit' in options ? options.baseCommit : readHeadCommit(repo.gitdir, repo.commonDir), // a fresh clone restores from it
    worktree: repo.root,
    branch: readHeadBranch(repo),
    createdAt: now,
    updatedAt: now,
    status: 'running',
    lineage: options.lineage ?? null,
    ...(typeof options.startCheckpoint === 'string' ? { startCheckpoint: options.startCheckpoint } : {}),
    attempts: [],
  };
}

/**
 * `base` with `change`, and with this process's attempt when it is its first write (`attempt`, with
 * the sandbox it runs commands in); the pinned configuration is kept, or added to an older run's.
 */
export function nextRunRecord(
  base: RunRecord,
  change: Partial<RunRecord>,
  now: string,
  attempt?: { number: number; firstLiveStep: number; worktree: string },
  sandbox?: RunSandbox,
  config?: RunConfig,
): RunRecord {
  const pinned = base.config ?? config;
  const attempts = attempt
    ? [...base.attempts, { number: attempt.number, startedAt: now, host: hostname(), pid: process.pid, firstLiveStep: attempt.firstLiveStep, worktree: attempt.worktree, ...(sandbox ? { sandbox } : {}) }]
    : base.attempts;
  return { ...base, ...change, ...(sandbox ? { sandbox } : {}), attempts, updatedAt: now, ...(pinned ? { config: pinned } : {}) };
}
