// `--push <remote>`: after every step the journal branch is pushed with the git CLI (isomorphic-git
// speaks only HTTP). A rejected push means the remote moved on: fetch it and fold it in; if another
// machine appended to this same run, stop, keeping every local entry.
import { spawn } from 'node:child_process';
import { JournalConflictError, PushFailedError, PushRejectedError } from '../errors/index.js';
import { JOURNAL_REF } from './layout.js';
import type { JournalStore } from './store.js';
import { integrate } from './sync.js';

/**
 * A hook for JournalStore's afterAppend that pushes the branch to `remote` (asynchronously: the
 * event loop runs on while git talks to the remote). A failure is the push's, never the append's:
 * the step it follows is already recorded.
 */
export function createJournalPusher(getStore: () => JournalStore, remote: string, run: string): (commit: string) => Promise<void> {
  return async () => {
    const store = getStore();
    for (let attempt = 0; attempt < 3; attempt++) {
      const push = await git(store, ['push', '--porcelain', '--end-of-options', remote, `${JOURNAL_REF}:${JOURNAL_REF}`]);
      if (push.status === 0) return;
      const output = `${push.stdout}\n${push.stderr}`;
      if (!/\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*(?:stale|lock)/.test(output)) throw new PushFailedError(remote, output);
      const tracking = `refs/remotes/${remote}/agent-journal`;
      const fetch = await git(store, ['fetch', '--quiet', '--end-of-options', remote, `+${JOURNAL_REF}:${tracking}`]);
      if (fetch.status !== 0) throw new PushFailedError(remote, fetch.stderr);
      const tip = (await git(store, ['rev-parse', '--verify', '--quiet', '--end-of-options', tracking])).stdout.trim();
      try {
        await integrate(store, tip, remote, run);
      } catch (error) {
        if (error instanceof JournalConflictError) throw new PushRejectedError(run, remote, error.data.entries);
        throw error;
      }
    }
    throw new PushRejectedError(run, remote, []);
  };
}

interface GitRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

// Runs git without blocking the event loop (a push can take seconds: a slow remote, a hook), so a
// model stream, a timer or a Ctrl-C handler keeps running meanwhile.
function git(store: JournalStore, args: string[]): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd: store.repo.root, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => resolve({ status: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
