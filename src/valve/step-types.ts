// What a caller of the valve says about its steps, and what the valve tells it back: the options of
// `openJournal` and `step` (and the check that refuses an option `step` does not know), the in-flight
// question and answer, and the events a front end prints.
// Tested in test/valve/run-journal.test.ts.
import { UsageError } from '../errors/index.js';
import type { EntryUsage, RunConfig, RunRecord, RunSandbox } from '../journal/entry.js';
import type { OrphanReport } from '../locks/live-commands.js';
import type { StoreOptions } from '../journal/store.js';

/** What a caller may say about one step. */
export interface StepOptions<T> {
  /**
   * The step is not safe to repeat (a command, an overwrite): record the intent before running it.
   * A function is asked only when the step goes live, so a replayed step never looks at the world.
   */
  intent?: boolean | (() => boolean);
  /**
   * The step's effect reaches beyond this machine's working tree (a command, an MCP call that
   * changes things): with `--push`, every earlier entry and then its intent must be pushed before it
   * runs, so another machine sees it as started. Implies `intent`. Asked like `intent`.
   */
  fence?: boolean | (() => boolean);
  /** For people: `run_bash "npm test"`. Defaults to the kind and a short rendering of the input. */
  describe?: string;
  /** A one-line result for people: `exit 1: 1 failed`. Defaults to a short rendering of the result. */
  summarize?: (result: T) => string;
  /** Token usage to record with the result (model calls). */
  usage?: (result: T) => EntryUsage | undefined;
  /**
   * Decides what to do with a step found started-but-unfinished (a crash mid-step). Without it the
   * step is not run again: `step` throws InFlightError (EINFLIGHT).
   */
  onInFlight?: (step: InFlightStep) => InFlightAnswer<T> | Promise<InFlightAnswer<T>>;
  /**
   * Called only when the step is about to run live, before its intent is recorded (approval):
   * it may throw to stop with nothing recorded, or return a result to record instead of running
   * (recorded with the resolution "declined").
   */
  decline?: () => Promise<{ result: T; summary?: string } | undefined> | { result: T; summary?: string } | undefined;
  /**
   * The working-tree checkpoint to record after the step (a git tree id, and files left out of it).
   * `true`: the checkpointer the run was opened with takes it (none without one), of the files
   * `changed` names when it does. A function: the step's own, given its result.
   */
  checkpoint?: boolean | ((result: T) => Promise<Checkpoint | undefined> | Checkpoint | undefined);
  /**
   * With `checkpoint: true`, the files the step changed, handed down with it: the caller fills in
   * `paths` once the step is live (an edit names its file), so a replayed step never looks at the
   * world, and the valve reads them when it takes the checkpoint, calling nothing back.
   */
  changed?: StepChanges;
  /**
   * Bytes the result names by their git blob id rather than holding (an image read): written with
   * the result's entry, in the same commit, as `runs/<run>/blobs/<id>`, so they are reachable and
   * pushed with it; replay reads them back by that id.
   */
  blobs?: (result: T) => Buffer[];
  /**
   * The step is one of a group of an answer's calls that run at the same time (the same object for
   * each of them, asked for in call order, one after another with no other step between): its
   * entries record the group's positions, within which the journal may hold a hole (see History).
   */
  batch?: StepBatch;
}

/**
 * The files a step changed, when its caller knows them: `paths` is set by the caller while the step
 * is live (before its effect, or when it answers an in-flight step), and read by the valve after it;
 * unset: any file may have changed, and the checkpoint is of the whole tree.
 */
export interface StepChanges {
  paths?: readonly string[];
}

/**
 * A group of steps run at the same time: how many, and the first one's position (set by the valve
 * when the first of them is asked for). Each takes the next position, in the order they are asked for.
 */
export interface StepBatch {
  size: number;
  first?: number;
}

/** The working tree after a step, as a git tree, and the files deliberately left out of it. */
export interface Checkpoint {
  tree: string;
  skipped?: Array<{ path: string; size: number; reason: string }>;
}

/**
 * Takes the working tree's checkpoint after a step (the session's is the run's WorktreeSnapshotter
 * under its subagents' file-step lock): given to the valve when the run opens (OpenJournalOptions).
 */
export interface Checkpointer {
  /** The working tree now; `paths`: the only files the step changed (an edit names its file), when it knows them. */
  take(paths?: readonly string[]): Promise<Checkpoint> | Checkpoint;
}

/** A step that was started before a crash and has no recorded result. */
export interface InFlightStep {
  run: string;
  position: number;
  kind: string;
  description: string;
  input: unknown;
  startedAt: string;
  /** The attempt that started it was stopped by Ctrl-C (it said so in run.json), not by a crash. */
  interrupted: boolean;
}

/** Run the step again, or record this result for it instead (without running anything). */
export type InFlightAnswer<T> = { rerun: true } | { result: T; summary?: string; resolution: string };

/** What the valve tells a front end, as it happens. */
export type StepEvent =
  | {
      type: 'replayed';
      position: number;
      kind: string;
      description: string;
      summary: string;
      originalDurationMs: number;
      result: unknown;
      resolution?: string;
    }
  | { type: 'started'; position: number; kind: string; description: string }
  | {
      type: 'recorded';
      position: number;
      kind: string;
      description: string;
      summary: string;
      durationMs: number;
      result: unknown;
      resolution?: string;
    }
  | { type: 'in-flight'; position: number; kind: string; description: string; decision: 'rerun' | 'answered'; interrupted: boolean }
  | { type: 'orphan'; position: number; description: string; pgid: number; startedAt: string; outcome: OrphanReport['outcome'] };

/** Options of openJournal: which run, what to record when it is created, and the hooks of the valve. */
export interface OpenJournalOptions {
  /** A directory inside the repository the agent works in. */
  dir: string;
  /** The run's id (letters, digits, `.`, `_`, `-`). */
  run: string;
  /** Recorded in run.json when the run is created. */
  task?: string;
  /**
   * What the model is sent for the task, when it differs from it (RunRecord.prompt): recorded in
   * run.json when the run is created.
   */
  prompt?: string;
  model?: string;
  lineage?: RunRecord['lineage'];
  /**
   * The run's pinned configuration: recorded in run.json when the run is created (and added to the
   * run.json of an older run without one at its next write). A run's recorded configuration wins
   * over it. A caller whose configuration depends on the run's record opens it with `openRun`,
   * reads the record, and hands this to `OpeningRun.pin`.
   */
  config?: RunConfig;
  /** Called for every step as it replays, starts and finishes. */
  onEvent?: (event: StepEvent) => void;
  /**
   * Rewrites every entry just before it is written (secret redaction). The valve then returns the
   * recorded (redacted) result, live or replayed, so both see exactly the same values.
   */
  redact?: <V>(value: V) => V;
  /** How this process runs commands, recorded in run.json with its attempt (asked at its first write). */
  sandbox?: () => RunSandbox | undefined;
  /**
   * The user's HEAD commit when the run is created, recorded in run.json as its base (a fresh clone
   * of it is restored from the checkpoint automatically). Default: HEAD of the repository at `dir`.
   */
  baseCommit?: string;
  /**
   * The working tree when the run is created, recorded in run.json (drift is measured from it
   * until the first step makes a checkpoint of its own). Only a new run records it: a caller that
   * takes it only then opens the run with `openRun` and hands it to `OpeningRun.pin`.
   */
  startCheckpoint?: string;
  /**
   * What takes the working tree's checkpoint after a step that asks for one with `checkpoint: true`:
   * handed down with the run, so the valve never asks its caller for it.
   */
  checkpointer?: Checkpointer;
  /**
   * Open the run from its snapshot when it has a valid one (valve/snapshot.ts): only the entries
   * after it are read, and `RunJournal.resumeState` is where savepoint's agent loop starts. Only
   * for that loop (a loop of one's own replays from step 1); default false: every entry is read.
   */
  fromSnapshot?: boolean;
  /** What the journal store does around each append: the hook after it (`--push`), and the one told when a moved branch was put back. */
  store?: JournalHooks;
}

/** The store's hooks a caller of the valve may set (the rest of StoreOptions is the store's own). */
export type JournalHooks = Pick<StoreOptions, 'afterAppend' | 'beforeFence' | 'onRestored'>;

// The options step() knows. One it does not know is refused: a guard renamed (gate became decline)
// must never silently stop guarding, running a step live that the caller meant to hold back.
const STEP_OPTIONS = new Set([
  'intent',
  'fence',
  'describe',
  'summarize',
  'usage',
  'onInFlight',
  'decline',
  'checkpoint',
  'changed',
  'batch',
  'blobs',
]);

/** Refuses an option step() does not know, before anything runs or is recorded. */
export function assertStepOptions(options: object): void {
  for (const name of Object.keys(options)) {
    if (!STEP_OPTIONS.has(name))
      throw new UsageError(
        `step() does not know the option "${name}": it takes ${[...STEP_OPTIONS].join(', ')}. Nothing was run or recorded.`,
      );
  }
}
