// One push of the journal branch to a remote, with the git CLI (isomorphic-git speaks only HTTP),
// and what it really did. Every git call here has a timeout: a remote that takes the connection and
// never answers is killed after it, like one that is down. A rejected push means the remote moved
// on: fetch it and fold it in (sync.ts); if another machine appended to this same run, that is final.
// A push git reports as failed may still have landed (a proxy that gave up after the remote took it,
// a failing hook after the update): the remote's ref is asked before a failure is believed.
// The queue that runs these in the background, with retries, is pusher.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { JournalConflictError, PushFailedError, PushRejectedError, RemoteDivergedError, type SavepointError } from '../errors/index.js';
import { showControls } from '../format/text.js';
import { startProcess } from '../os/processes.js';
import { JOURNAL_REF } from './layout.js';
import { listJournalRefs } from './journal-refs.js';
import type { JournalStore } from './store.js';
import { integrate } from './sync.js';

/** How one push attempt ended. */
export type PushAttempt =
  /** On the remote now; `reported` is the failure git reported although the remote has the commit. */
  | { outcome: 'landed'; reported?: string }
  /** The remote had moved on and was folded in here: push the new tip at once. */
  | { outcome: 'merged' }
  /** Worth trying again later: the remote is down, slow, busy or silent. */
  | { outcome: 'passing'; reason: string }
  /** Trying again changes nothing (no such remote, no permission, refused by policy, another machine's run). */
  | { outcome: 'final'; error: SavepointError };

// A push refused because the remote's branch is not what ours builds on (or was being updated: two
// pushes creating the branch at once get "cannot lock ref ... reference already exists" from the
// remote, on a line of its own after the status line).
const REJECTED =
  /\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*(?:stale|lock)|\[remote rejected\] \(failed to update ref\)[\s\S]*(?:cannot lock ref|reference already exists)/;
// HTTP answers that say "not you, not this": no retry changes them (408 and 429 are passing).
const REFUSED = /(?:returned error:|HTTP) 4(?!08|29)\d\d\b/;
// Failures of the way there, not of the push: worth another try.
const PASSING =
  /Failed to connect|Couldn't connect|Connection refused|Connection reset|Connection timed out|timed out|Could not resolve (?:host|proxy)|returned error: (?:5\d\d|408|429)|HTTP (?:5\d\d|408|429)|RPC failed|early EOF|hung up unexpectedly|unexpected disconnect|Empty reply from server|Recv failure|Send failure|SSL_|gnutls|TLS connection/i;

/**
 * Pushes `commit` (the local tip) to the journal branch of `remote`, giving git `timeoutMs` per
 * call; the process groups of the git calls under way are in `running` meanwhile (stopGits ends them).
 */
export async function pushOnce(
  store: JournalStore,
  remote: string,
  run: string,
  commit: string,
  timeoutMs: number,
  running: Set<number> = new Set(),
): Promise<PushAttempt> {
  const git = (args: string[]) => runGit(store, args, timeoutMs, running);
  const push = await git(['push', '--porcelain', '--end-of-options', remote, `${commit}:${JOURNAL_REF}`]);
  if (push.status === 0) return { outcome: 'landed' };
  const output = push.timedOut ? noAnswer(timeoutMs) : `${push.stdout}\n${push.stderr}`;
  if (!push.timedOut && REJECTED.test(output)) return foldIn(store, remote, run, timeoutMs, git);
  // Git says it failed; the remote may say otherwise (it took the push, then something after failed).
  const there = await git(['ls-remote', '--end-of-options', remote, JOURNAL_REF]);
  // What git said went wrong is on stderr (stdout holds --porcelain's status lines).
  const said = push.timedOut ? output : lastLines(push.stderr) || lastLines(output);
  if (there.status === 0 && there.stdout.split(/\s/)[0] === commit) return { outcome: 'landed', reported: said };
  if (push.timedOut || (!REFUSED.test(output) && PASSING.test(output))) return { outcome: 'passing', reason: said };
  return { outcome: 'final', error: new PushFailedError(remote, gitSays(output)) };
}

// A fetch of the journal is no moment for git's housekeeping: `maintenance run --auto` (gc --auto
// before git 2.29) after it held a CI job's resume for up to half a second, on the clock of a run
// about to go live. The person's next git command still does it. (Unknown keys are ignored by older git.)
const NO_AUTO_MAINTENANCE = ['-c', 'maintenance.auto=false', '-c', 'gc.auto=0'];

/** What fetching a remote's journal did: fetched (or the remote has none yet), or why not, and whether a retry could change that. */
export type JournalFetch = { outcome: 'fetched' | 'none' } | { outcome: 'passing' | 'final'; reason: string };

/**
 * Fetches `remote`'s journal branch into `refs/remotes/<remote>/agent-journal` with an explicit
 * refspec, so a single-branch or shallow clone (a CI job's) gets it too; `--push <remote>` does
 * this before a run is looked for, so the run a killed job left goes on. A shallow clone with no
 * journal yet gets the journal's last commit only (see shallowJournal). The process groups of the
 * git calls under way are in `running` meanwhile (stopGits ends them).
 */
export async function fetchJournal(
  store: JournalStore,
  remote: string,
  timeoutMs: number,
  running: Set<number> = new Set(),
): Promise<JournalFetch> {
  const depth = shallowJournal(store) ? ['--depth', '1'] : [];
  const fetch = await runGit(
    store,
    [
      ...NO_AUTO_MAINTENANCE,
      'fetch',
      '--quiet',
      '--no-write-fetch-head',
      ...depth,
      '--end-of-options',
      remote,
      `+${JOURNAL_REF}:refs/remotes/${remote}/agent-journal`,
    ],
    timeoutMs,
    running,
  );
  if (fetch.status === 0) return { outcome: 'fetched' };
  const output = fetch.timedOut ? noAnswer(timeoutMs) : fetch.stderr;
  if (/couldn't find remote ref/i.test(output)) return { outcome: 'none' };
  return PASSING.test(output) && !REFUSED.test(output)
    ? { outcome: 'passing', reason: lastLines(output) }
    : { outcome: 'final', reason: gitSays(output) };
}

// Whether to fetch the journal's last commit only: in a shallow clone (a CI checkout, whose own
// history is cut already) that has no journal of any remote yet. Every entry of every run is in the
// tip's tree, so a resume needs nothing older; the history is most of what a full fetch moves and
// indexes (a 6,000-step run: 42,000 objects against 6,100). The pushes that follow build on that
// commit, which the remote has; a later fetch (a push rejected, the fence's) connects to it and
// brings only what is new. A full clone is never made shallow, and a clone that has a journal
// already fetches the rest in full: its history is there to build on.
function shallowJournal(store: JournalStore): boolean {
  return existsSync(join(store.repo.commonDir, 'shallow')) && listJournalRefs(store.repo.commonDir).length === 0;
}

// The remote moved on: fetch its journal and fold it in; another machine's entries on this run end it.
async function foldIn(
  store: JournalStore,
  remote: string,
  run: string,
  timeoutMs: number,
  git: (args: string[]) => Promise<GitRun>,
): Promise<PushAttempt> {
  const tracking = `refs/remotes/${remote}/agent-journal`;
  const fetch = await git([...NO_AUTO_MAINTENANCE, 'fetch', '--quiet', '--end-of-options', remote, `+${JOURNAL_REF}:${tracking}`]);
  if (fetch.status !== 0) {
    const output = fetch.timedOut ? noAnswer(timeoutMs) : fetch.stderr;
    return PASSING.test(output) && !REFUSED.test(output)
      ? { outcome: 'passing', reason: lastLines(output) }
      : { outcome: 'final', error: new PushFailedError(remote, gitSays(output)) };
  }
  const tip = (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', tracking])).stdout.trim();
  try {
    const folded = await integrate(store, tip, remote, run);
    // Another run diverged: the local branch cannot build on the remote's, so no push can land.
    if (folded.action === 'conflict')
      return {
        outcome: 'final',
        error: new RemoteDivergedError(
          remote,
          run,
          (folded.conflicts ?? []).map((c) => c.run),
        ),
      };
  } catch (error) {
    if (error instanceof JournalConflictError) return { outcome: 'final', error: new PushRejectedError(run, remote, error.data.entries) };
    throw error;
  }
  return { outcome: 'merged' };
}

const noAnswer = (timeoutMs: number) => `git got no answer within ${formatSeconds(timeoutMs)} (--push-timeout)`;

/** Milliseconds as people read them in a message: `0.5 s`, `30 s`. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
}

// The last lines of git's output, on one line with control characters shown: what a message quotes.
function lastLines(output: string): string {
  return showControls(
    output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && line !== 'Done' && !line.startsWith('To '))
      .slice(-2)
      .join(' '),
  ).slice(0, 300);
}

// What git said went wrong, for a message: its fatal:, error:, remote: and ! lines (else every
// line), without the advice that follows them, control characters shown.
function gitSays(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const said = lines.filter((line) => /^(?:fatal|error|remote):|^!/.test(line));
  return showControls((said.length ? said : lines).join('\n').replace(/\.$/, ''));
}

interface GitRun {
  status: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

// Runs git without blocking the event loop (a push can take seconds: a slow remote, a hook), so a
// model stream, a timer or a Ctrl-C handler keeps running meanwhile. It runs in a process group of
// its own, so the timeout ends git and its helpers (git-remote-http, ssh) together.
async function runGit(store: JournalStore, args: string[], timeoutMs: number, running: Set<number>): Promise<GitRun> {
  const handle = startProcess('git', args, {
    cwd: store.repo.root,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    group: true,
    timeoutMs,
  });
  let stdout = '';
  let stderr = '';
  const pid = handle.pid;
  if (pid !== undefined) running.add(pid);
  handle.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  handle.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const end = await handle.closed;
  if (pid !== undefined) running.delete(pid);
  return {
    status: end.error ? null : end.code,
    stdout,
    stderr: end.error ? `${stderr}${end.error.message}` : stderr,
    timedOut: end.timedOut,
  };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Ends the git calls in `running` (the run is over and will not wait for them). */
export function stopGits(running: Set<number>): void {
  for (const pid of running) killGroup(pid);
}
