// The named ways into a run's life, for the CLI and the library alike: start (or continue) the run
// for a task, resume a run, continue a run with a follow-up, fork a run at a step. Each finds the
// run in the journals (after folding in the ones fetched from other machines; with --push or the
// `remote` setting, that remote's fetched first), checks that the request makes sense, and hands it
// to driveSession, fenced against the remote a fetched run came from (fetched again first) unless the
// person chose (--push <remote>, --no-push).
import { forkRun as forkJournalRun, type ForkResult } from '../valve/fork.js';
import { FinishedElsewhereError, NoRunsError, NoUnfinishedRunError, UnknownRunError, UsageError } from '../errors/index.js';
import { readHeadBranch } from '../git/refs.js';
import { worktreeRoots } from '../git/repository.js';
import { isSubagentLineage, type RunRecord } from '../journal/entry.js';
import { listRunIds, readRunRecord } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import { assertNoConflict, remotesHolding, syncJournals } from '../journal/sync.js';
import { DEFAULT_MODEL } from '../model/index.js';
import { openRunSecrets } from '../redact/run-secrets.js';
import { assertPinned } from './config.js';
import { driveSession, type RunTarget } from './drive.js';
import { pusherOptions, withFenceAdvice } from './pushing.js';
import { fetchJournal, stopGits } from '../journal/push.js';
import { DEFAULT_PUSH_TIMEOUT_MS } from '../journal/pusher.js';
import { resolveRunId, runsForTask, sameTask, taskRunBases } from '../journal/run-id.js';
import { expandMessage } from './message-expansion.js';
import type { RunOutcome, SessionOptions } from './types.js';

/** Options of startRun: the task, and which of its runs. */
export interface StartOptions extends SessionOptions {
  /** What the agent should do, in plain words. */
  task: string;
  /** The run id. Default: derived from the task text, so the identical call finds the same run. */
  run?: string;
  /** Start a new run even if one exists for this task. */
  fresh?: boolean;
}

// The latest run of a task among `ids` and the next free id for it. Its id is derived from the
// normalised text (or, for runs of older builds, the case-folded or exact text); a run is the task's
// only when its recorded task is this task, so a task that differs in case only, or whose digest
// collides, never takes another task's run.
async function taskRuns(store: JournalStore, task: string, ids: string[]): Promise<{ latest?: string; next: string }> {
  const bases = taskRunBases(task);
  for (const base of bases) {
    const mine: string[] = [];
    for (const id of ids) {
      if (runsForTask(base, [id]).latest === undefined) continue;
      const record = await readRunRecord(store, id);
      if (record === undefined || sameTask(record.task, task)) mine.push(id);
    }
    const found = runsForTask(base, mine);
    if (found.latest) return { latest: found.latest, next: runsForTask(base, ids).next };
  }
  return { next: runsForTask(bases[0]!, ids).next };
}

/**
 * Starts the run for a task, or continues it: the identical call finds the same run, replays its
 * finished steps from the journal and goes live at the first step with no recorded result. A
 * finished run replays to its final answer with no model call.
 */
export async function startRun(options: StartOptions): Promise<RunOutcome> {
  if (!options.task.trim()) throw new UsageError('Say what the agent should do: savepoint run "fix the failing test".');
  const { store, synced } = await openSynced(options.dir, options);
  // A secret typed into the task must not reach the run id, run.json or commit subjects.
  const task = openRunSecrets(store.repo.commonDir, options.env).redactor.text(options.task.trim());
  const ids = await listRunIds(store);
  let run = options.run;
  const derived = run === undefined;
  let renewal: string | undefined; // the task's next id, should its latest run have finished on a repository that moved on since
  if (run === undefined) {
    const { latest, next } = await taskRuns(store, task, ids);
    run = options.fresh ? next : (latest ?? next);
    if (!options.fresh && latest) renewal = next;
  } else if (options.fresh && ids.includes(run)) {
    throw new UsageError(`Run ${run} already exists, so --fresh cannot start it anew: drop --run, or give a new id.`);
  }
  assertNoConflict(synced, run);
  const record = ids.includes(run) ? await readRunRecord(store, run) : undefined;
  if (record && !sameTask(record.task, task)) {
    throw new UsageError(
      `Run ${run} is for the task "${record.task}", not "${task}". Use "savepoint resume ${run}" to continue it, or another --run id.`,
    );
  }
  // The same task finished in another worktree or on another branch: its answer is not this tree's work.
  if (derived && record?.status === 'finished' && isElsewhere(record, store.repo))
    throw new FinishedElsewhereError(run, record.worktree ?? null, record.branch ?? null);
  assertPinned(record, options);
  // Yesterday's success is not today's: a finished run replays only on the repository as it left it.
  const renew = renewal && record?.status === 'finished' ? { renew: { run: renewal, model: modelOf(undefined, options) } } : {};
  // What the model is sent, expanded from what was typed (a custom command, @-mentions) only for a new run.
  const prompt = options.expand ? { prompt: () => expandedText(store, options.task, options) } : {};
  return drive(
    { store, run, task: record?.task ?? task, ...prompt, model: modelOf(record, options), ...renew },
    record ? await fencedOptions(store, run, options) : options,
  );
}

// What the model is sent for `typed` (a task, a follow-up), redacted as the typed words are; undefined when it is the words themselves.
function expandedText(store: JournalStore, typed: string, options: SessionOptions): string | undefined {
  const sent = expandMessage(typed, options.expand, {
    root: store.repo.root,
    cwd: options.dir ?? process.cwd(),
    ...(options.permission ? { permission: options.permission } : {}),
  });
  return sent === undefined ? undefined : openRunSecrets(store.repo.commonDir, options.env).redactor.text(sent);
}

// Whether a run was created in another worktree of this repository and never went live in this
// one, or on another branch than HEAD's (older runs say neither). A run created in a folder that is
// no worktree here came from another machine (a CI job's clone): only its branch counts, and a
// detached HEAD (as CI checks out) is no other branch.
function isElsewhere(record: RunRecord, repo: JournalStore['repo']): boolean {
  const head = readHeadBranch(repo);
  if (record.worktree !== undefined && record.worktree !== repo.root && !record.attempts.some((a) => a.worktree === repo.root)) {
    if (worktreeRoots(repo).has(record.worktree)) return true;
    return record.branch !== undefined && record.branch !== null && head !== null && record.branch !== head;
  }
  return record.branch !== undefined && record.branch !== null && record.branch !== head;
}

/** Options of resumeRun. */
export interface ResumeOptions extends SessionOptions {
  /** The run to resume. Default: the most recent unfinished one. */
  run?: string;
}

/** Resumes a run by id, or the most recent unfinished one, found locally or in a fetched journal. */
export async function resumeRun(options: ResumeOptions = {}): Promise<RunOutcome> {
  const { store, synced } = await openSynced(options.dir, options);
  const record = options.run
    ? await readRunRecord(store, await resolved(store, options.run))
    : await latestRun(store, (r) => r.status !== 'finished');
  if (!record) throw options.run ? new UnknownRunError(options.run) : new NoUnfinishedRunError();
  assertNotOwnedSubagent(record);
  assertNoConflict(synced, record.id);
  assertPinned(record, options);
  return drive(
    { store, run: record.id, task: record.task, model: modelOf(record, options) },
    await fencedOptions(store, record.id, options),
  );
}

/** Options of continueRun: the follow-up, and which run it is for. `model` here changes the run's model from this follow-up on (a journaled config step). */
export interface ContinueOptions extends SessionOptions {
  /** The follow-up instruction, recorded as a journaled user step ('' with `model`: only the change of model). */
  message: string;
  /** The run to continue. Default: the most recent run of this working tree. */
  run?: string;
  /** Compact the conversation first (a journaled config step, then the compact step), as `/compact` asks. */
  compact?: boolean;
  /** The message is new whatever the journal holds (a session's message): see RunTarget.newMessage. */
  newMessage?: boolean;
}

/**
 * Gives a run a follow-up instruction: its earlier steps replay, the instruction is recorded as a
 * step of its own, and the model answers it live. The identical call after a crash (the run has not
 * answered its last follow-up yet, as the journal says) resumes that follow-up; it is never added
 * twice. Once the run has answered, the same words are a new follow-up. Works on finished runs and on runs stopped at a limit.
 */
export async function continueRun(options: ContinueOptions): Promise<RunOutcome> {
  if (!options.message.trim() && options.model === undefined && !options.compact)
    throw new UsageError('Say what the agent should do next: savepoint continue "now add a test for it".');
  // A session's run held open since its last turn goes on where its loop waits: nothing is read again.
  const held = await options.hold?.take(options.run, options);
  if (held)
    return held.go(
      {
        message: options.message,
        ...(options.model !== undefined ? { model: options.model } : {}),
        ...(options.compact ? { compact: true } : {}),
        ...(options.newMessage ? { newMessage: true } : {}),
      },
      options,
    );
  const { store, synced } = await openSynced(options.dir, options);
  // Redacted before it is a step's key, as the task is: the journal never holds the secret.
  const message = openRunSecrets(store.repo.commonDir, options.env).redactor.text(options.message.trim());
  // The most recent run of this working tree: created here, gone live here, or too old to say.
  const here = (r: RunRecord) =>
    r.worktree === undefined || r.worktree === store.repo.root || r.attempts.some((a) => a.worktree === store.repo.root);
  const record = options.run ? await readRunRecord(store, await resolved(store, options.run)) : await latestRun(store, here);
  if (!record) throw options.run ? new UnknownRunError(options.run) : new NoRunsError(store.repo.root);
  assertNotOwnedSubagent(record);
  assertNoConflict(synced, record.id);
  // --model on continue is a change of model within the run (a config step), not a clash with the pinned one.
  assertPinned(record, { ...options, model: undefined });
  // The person's own changes to the files are kept (and the model told of them): a follow-up is about the files as they are.
  const sent = options.expand && message ? { followUpSent: () => expandedText(store, options.message, options) } : {};
  const target = {
    store,
    run: record.id,
    task: record.task,
    model: modelOf(record, {}),
    keepByDefault: true,
    ...(message ? { followUp: message, ...sent, ...(options.newMessage ? { newMessage: true } : {}) } : {}),
    ...(options.compact ? { compact: true } : {}),
  };
  return drive(
    options.model !== undefined ? { ...target, modelChange: options.model } : target,
    await fencedOptions(store, record.id, options),
  );
}

/** The id of this working tree's most recent run (created here, gone live here, or too old to say), or undefined when it has none. */
export async function latestRunHere(dir?: string): Promise<string | undefined> {
  const { store } = await openSynced(dir);
  const here = (r: RunRecord) =>
    r.worktree === undefined || r.worktree === store.repo.root || r.attempts.some((a) => a.worktree === store.repo.root);
  return (await latestRun(store, here))?.id;
}

/** Options of forkRun. */
export interface ForkOptions {
  /** A directory inside the repository. Default: the current directory. */
  dir?: string;
  /** The run to fork. */
  from: string;
  /** The first step the new run does anew (it keeps the steps before it). */
  at: number;
  /** The new run's id. Default: `<from>-fork-<at>`, numbered on when taken. */
  run?: string;
}

/** Creates a new run from the steps of another before a given step; resumeRun then goes live there. */
export async function forkRun(options: ForkOptions): Promise<ForkResult & { id: string; from: string }> {
  if (!Number.isInteger(options.at) || options.at < 1) throw new UsageError(`--at needs a step number (1 or more), not "${options.at}".`);
  const store = await JournalStore.open(options.dir ?? process.cwd());
  const ids = new Set(await listRunIds(store));
  const from = resolveRunId(options.from, [...ids]) ?? options.from;
  let id = options.run ?? `${from}-fork-${options.at}`;
  for (let n = 2; !options.run && ids.has(id); n++) id = `${from}-fork-${options.at}-${n}`;
  return { ...(await forkJournalRun(store, from, options.at, id)), id, from };
}

// The run id `given` names (itself, or the one id it is a unique prefix of); unknown ids pass through.
async function resolved(store: JournalStore, given: string): Promise<string> {
  return resolveRunId(given, await listRunIds(store)) ?? given;
}

// The model a run uses: the one it recorded, else the one asked for, else settings', else the default.
function modelOf(record: RunRecord | undefined, options: SessionOptions): string {
  return record?.config?.model ?? record?.model ?? options.model ?? options.defaultModel ?? DEFAULT_MODEL;
}

/**
 * The options a run goes on with: a run that a fetched journal holds (it came from another machine,
 * or went there) pushes to that remote as `--push <remote>` would, so a one-shot effect runs only
 * once the remote has its start, and a machine the run moved on from stops at its next push instead
 * of doing the effect again. The person's own choice wins: `--push <remote>`, or `push: false`
 * (`--no-push`).
 */
async function fencedOptions<T extends SessionOptions>(store: JournalStore, run: string, options: T): Promise<T> {
  if (options.push !== undefined) return options;
  const [remote] = await remotesHolding(store, run);
  if (remote === undefined) return options;
  const fenced = { ...options, push: remote, fencedFrom: remote };
  // Its copy here may be old (a clone made before the other machine went on): fetched first, as
  // --push does, so the steps the remote has replay instead of stopping this run at its first push.
  await fetchFirst(store, remote, fenced);
  assertNoConflict(await syncJournals(store), run);
  return fenced;
}

// driveSession, with a push failure of a run fenced by default saying how to opt out.
async function drive(target: RunTarget, options: SessionOptions): Promise<RunOutcome> {
  try {
    const outcome = await driveSession(target, options);
    return outcome.pushFailure ? { ...outcome, pushFailure: withFenceAdvice(outcome.pushFailure, options.fencedFrom) } : outcome;
  } catch (error) {
    throw withFenceAdvice(error, options.fencedFrom);
  }
}

// The journal store, with every fetched journal folded into the local branch first. With `--push
// <remote>`, that remote's journal is fetched first (a CI job's shallow, single-branch clone has none):
// the run a killed job left is then found and goes on. A fetch that fails leaves the journals as they
// are: the pushes say what is wrong with the remote, and a run there that this clone could not see
// stops at its first push (rejected), before any one-shot effect.
async function openSynced(dir: string | undefined, options: SessionOptions = {}) {
  const store = await JournalStore.open(options.repository ?? dir ?? process.cwd());
  if (typeof options.push === 'string') await fetchFirst(store, options.push, options);
  const synced = await syncJournals(store);
  return { store, synced };
}

// `--push <remote>`'s fetch of that remote's journal, within --push-timeout; Ctrl-C ends it (git and
// its helpers) and stops the command there.
async function fetchFirst(store: JournalStore, remote: string, options: SessionOptions): Promise<void> {
  const timeoutMs = pusherOptions(options, options.env ?? process.env).timeoutMs ?? DEFAULT_PUSH_TIMEOUT_MS;
  const gits = new Set<number>();
  const stop = () => stopGits(gits);
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    await fetchJournal(store, remote, timeoutMs, gits);
  } finally {
    options.signal?.removeEventListener('abort', stop);
  }
  options.signal?.throwIfAborted();
}

// The most recently active run that `accept` takes.
// An unfinished subagent goes on only with its parent, which hands its answer back to the parent's
// conversation: driven alone, it would finish with nobody to hand the answer to.
function assertNotOwnedSubagent(record: RunRecord): void {
  const lineage = record.lineage;
  if (!isSubagentLineage(lineage) || record.status === 'finished') return;
  throw new UsageError(
    `Run ${record.id} is a subagent of run ${lineage.parentRun} (its task call at step #${lineage.parentStep}): it goes on with its parent. Resume that one: savepoint resume ${lineage.parentRun}`,
  );
}

// A subagent is never the run meant by default: its parent owns it (resuming the parent resumes it).
async function latestRun(store: JournalStore, accept: (record: RunRecord) => boolean): Promise<RunRecord | undefined> {
  let latest: RunRecord | undefined;
  for (const id of await listRunIds(store)) {
    const record = await readRunRecord(store, id);
    if (record && !isSubagentLineage(record.lineage) && accept(record) && (!latest || record.updatedAt > latest.updatedAt)) latest = record;
  }
  return latest;
}
