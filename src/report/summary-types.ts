// The shapes `savepoint runs`, `log` and `show` print (and `--json` emits): a run's summary, its
// steps and attempts as a timeline, and what resuming saved. Built by summarize.ts.
// No behaviour of its own: types only.
import type { RunRecord } from '../journal/entry.js';

/**
 * running: a live process holds its run lock. in-flight: it stopped with a step started and never
 * recorded. interrupted: it stopped otherwise unfinished. diverged: this machine's journal and a
 * remote-tracking one each hold entries of the run the other lacks.
 */
export type RunStatus = 'running' | 'finished' | 'refused' | 'failed' | 'in-flight' | 'interrupted' | 'diverged';

/** Token counts, summed or of one call. */
export interface TokenTotals {
  input: number;
  output: number;
  cacheCreation: number;
  cacheRead: number;
}

/** One row of `savepoint runs`. */
export interface RunSummary {
  id: string;
  task: string;
  status: RunStatus;
  /** The status run.json records (`running` also for a run that stopped without saying so). */
  recordedStatus: RunRecord['status'] | null;
  model: string | null;
  steps: number;
  modelCalls: number;
  tokens: TokenTotals;
  /** Times the run was resumed: attempts beyond the first. */
  resumes: number;
  lineage: { forkedFrom: string; atStep: number } | null;
  /** A subagent's parent: the run, the step of its task call, and that call's description; null for any other run. */
  parent: { run: string; step: number; description: string } | null;
  createdAt: string | null;
  /** The latest time anything was recorded for the run (ISO 8601). */
  lastActivity: string | null;
  /** Where the run was read from (`local`, or a remote's name) and every journal that holds it. */
  shownFrom: string;
  sources: string[];
  /** The follow-up instructions given with `savepoint continue`, in order (each a user step). */
  followUps: string[];
  /** The working tree (its root path) and branch the run was created in; null when not recorded. */
  worktree: string | null;
  branch: string | null;
  /** The working trees (root paths) its attempts went live in, each once, in order. */
  wentLive: string[];
}

/** One step of the timeline. */
export interface StepView {
  step: number;
  kind: string;
  description: string;
  summary: string | null;
  /** finished: it has a result. in-flight: only its intent was recorded (a crash mid-step). */
  state: 'finished' | 'in-flight';
  /**
   * The attempt that recorded its result (or, for an in-flight step, its intent); 0 for a step a
   * fork copied from its parent run.
   */
  attempt: number;
  /** The attempt that started it, when a crash left it in flight and a later attempt resolved it. */
  startedInAttempt: number | null;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  model: string | null;
  usage: TokenTotals | null;
  isError: boolean | null;
  resolution: string | null;
  checkpoint: string | null;
  /** Attempts that handed this step back from the journal instead of running it again. */
  replayedBy: number[];
  /** A user step's follow-up instruction, in full (null for every other kind). */
  message: string | null;
  /** A task step's subagent: its run (where it ran), its description, and its final answer once the step has it (null for every other kind). */
  subagent: { run: string; description: string; answer: string | null } | null;
}

/** One process that went live on the run, and where it did. */
export interface AttemptView {
  number: number;
  startedAt: string;
  host: string;
  pid: number;
  /** Steps 1..firstLiveStep-1 were replayed from the journal; firstLiveStep ran live. */
  firstLiveStep: number;
  replayedSteps: number;
  liveSteps: number;
  /** A step this attempt started and did not record (it stopped mid-step), if any. */
  leftInFlight: number | null;
  /** The step left in flight by an earlier crash that this attempt ran again (--in-flight rerun), else null. */
  rerun: number | null;
  /** When it was stopped by Ctrl-C (run.json says so), else null (it finished, or crashed). */
  interruptedAt: string | null;
  /** How it ended (see AttemptEnding). */
  ended: AttemptEnding;
}

/**
 * How one attempt ended: finished (its final answer), stopped at a limit, interrupted (Ctrl-C,
 * SIGTERM, SIGHUP), failed with its error, crashed (it recorded no end and a later attempt came,
 * or no process runs it), or still running.
 */
export interface AttemptEnding {
  how: 'finished' | 'limit' | 'interrupted' | 'failed' | 'crashed' | 'running';
  /** When, as the attempt recorded it (null: crashed, running, or an older run that did not say). */
  at: string | null;
  /** The limit that stopped it (`max-steps`, `max-turns`, `max-cost`), else null. */
  limit: string | null;
  /** The error that failed it, else null. */
  error: string | null;
}

/** What replaying steps instead of running them again saved. */
export interface Savings {
  replayedSteps: number;
  modelCalls: number;
  commands: number;
  tokens: TokenTotals;
  estimatedCostUsd: number;
  /** The original durations of the replayed steps. */
  originalMs: number;
}

/** A whole run: what `savepoint log --json` prints. */
export interface Timeline {
  run: RunSummary;
  final: string | null;
  error: string | null;
  baseCommit: string | null;
  /** The working tree when the run was created (a git tree id), when recorded. */
  startCheckpoint: string | null;
  attempts: AttemptView[];
  steps: StepView[];
  totals: {
    steps: number;
    modelCalls: number;
    commands: number;
    tokens: TokenTotals;
    estimatedCostUsd: number;
    // The sum of every step's own duration, and first start to last activity (gaps included).
    workMs: number;
    wallMs: number;
  };
  saved: Savings & { byAttempt: Array<Savings & { attempt: number }> };
}

/** Facts about a run that are not in its entries. */
export interface RunContext {
  /** A live process holds the run's lock. */
  running?: boolean;
  diverged?: boolean;
  shownFrom?: string;
  sources?: string[];
}
