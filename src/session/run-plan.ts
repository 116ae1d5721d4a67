// What a run is when its session opens it, from what its journal recorded and what the command
// asked for: the follow-ups and config steps (a model, a compaction) to hear, whether it only
// replays, whether it needs a model, and what the `opened` event says (new, resuming, finished,
// continuing). Nothing here writes: drive.ts takes the working tree and checks for credentials.
import { CONFIG_STEP_KIND, USER_STEP_KIND, type ConfigChange, type FollowUp } from '../agent/loop.js';
import type { RunRecord } from '../journal/entry.js';
import type { RunJournal } from '../valve/run-journal.js';
import type { RunTarget } from './drive.js';
import type { OpenedAs, SessionEvent } from './types.js';

/** What `begin` found the run to be, for the loop. */
export interface RunPlan {
  /** A finished run with no new follow-up: it replays to its final answer, with no key and no live step. */
  replayOnly: boolean;
  followUps: FollowUp[];
  configChanges: ConfigChange[];
  /** Only a change was asked for (a model, a compaction), no message: the loop does not go on past it (AgentOptions.changesOnly). */
  changesOnly: boolean;
}

/** A run's plan, with what opening it needs and says. */
export interface OpenedRun extends RunPlan {
  /** The model the run uses now: its last config step's (a new one included), else the pinned one. */
  model: string;
  /** Whether a model is asked, so a key is needed before anything happens. */
  asksModel: boolean;
  /** The `opened` event, but for its type, run and task. */
  opened: Omit<Extract<SessionEvent, { type: 'opened' }>, 'type' | 'run' | 'task'>;
}

/** What `target` asks of the run `journal` holds: its follow-ups and config changes, new ones added at the steps they will take. */
export function planRun(
  journal: RunJournal,
  target: Pick<RunTarget, 'model' | 'followUp' | 'followUpSent' | 'newMessage' | 'modelChange' | 'compact'>,
): OpenedRun {
  const record = journal.record.current;
  const followUps = recordedFollowUps(journal);
  const configChanges = recordedConfigChanges(journal);
  // Opened from a snapshot, the steps up to it were not read: it says which model and follow-up they left.
  const before = journal.resumeState;
  // The model the run uses now: its last config step's, else the pinned one.
  let model = configChanges.filter((change) => change.model !== undefined).at(-1)?.model ?? before?.model ?? target.model;
  const lastRecorded = followUps.at(-1) ?? before?.lastFollowUp;
  const newFollowUp = target.followUp !== undefined && !resumesLastFollowUp(record, lastRecorded, target);
  // A change of model is its own step, before the follow-up it comes with (the identical
  // command again finds the run on that model already and adds nothing).
  const newChange = target.modelChange !== undefined && target.modelChange !== model;
  if (newChange) {
    configChanges.push({ model: target.modelChange!, step: journal.history.lastPosition + 1 });
    model = target.modelChange!;
  }
  // A compaction asked for: its config step comes after a change of model, before the follow-up.
  if (target.compact) configChanges.push({ compact: true, step: journal.history.lastPosition + 1 + (newChange ? 1 : 0) });
  const changesBefore = (newChange ? 1 : 0) + (target.compact ? 1 : 0);
  // Its step is the one after the journal's last: a run stopped short of its answer (a limit, a
  // crash) hears it before its next model call; a finished one right after its final answer.
  if (newFollowUp) {
    // Expanded only now that it is known to be new: a recorded one sends what it sent.
    const sent = target.followUpSent?.();
    followUps.push({
      message: target.followUp!,
      ...(sent !== undefined ? { sent } : {}),
      step: journal.history.lastPosition + 1 + changesBefore,
    });
  }
  // A finished run replays with no key; anything else needs one before anything happens (a
  // change of model alone to a finished run asks no model).
  const replayOnly = record?.status === 'finished' && !newFollowUp && !newChange && !target.compact;
  const changesOnly = target.followUp === undefined && (target.modelChange !== undefined || Boolean(target.compact));
  const asksModel = !replayOnly && !(changesOnly && !target.compact) && !(record?.status === 'finished' && !newFollowUp && !target.compact);
  const recordedSteps = journal.history.finishedCount;
  const openedAs: OpenedAs = newFollowUp ? 'continuing' : replayOnly ? 'finished' : recordedSteps > 0 ? 'resuming' : 'new';
  const givenAt = target.followUp !== undefined && !newFollowUp ? lastRecorded?.step : undefined;
  const interrupted = Boolean(record?.attempts.at(-1)?.interruptedAt);
  // The last attempt ran a step again and was killed before it recorded anything.
  const lastAttempt = journal.record.killedAttempt;
  const killed = lastAttempt && {
    attempt: lastAttempt.number,
    startedAt: lastAttempt.startedAt,
    host: lastAttempt.host,
    pid: lastAttempt.pid,
    rerun: lastAttempt.rerun!,
  };
  const told = journal.config?.instructions;
  // The run's latest follow-up, new or recorded (the identical `continue` again, a resume after a
  // crash in its answer): the steps before it are the conversation it continued.
  const followUpStep = followUps.at(-1)?.step ?? lastRecorded?.step;
  const opened = {
    model,
    openedAs,
    recordedSteps,
    interrupted,
    inFlight: journal.history.inFlight,
    ...(openedAs === 'finished' && record?.refused ? { refused: true } : {}),
    ...(killed ? { killedBeforeRecording: killed } : {}),
    ...(givenAt ? { followUpGivenAt: givenAt } : {}),
    ...(followUpStep ? { followUpStep } : {}),
    ...(told && openedAs === 'new' ? { instructions: told.file } : {}),
    ...(journal.resumedFrom ? { fromSnapshot: journal.resumedFrom } : {}),
  };
  return { replayOnly, followUps, configChanges, changesOnly, model, asksModel, opened };
}

// Whether the follow-up asked for is the run's last recorded one, given again after a crash: the
// journal says so, not the words. The last follow-up's own step is recorded and the run has not
// reached a final answer since (run.json turns "running" in the very commit of a process's first
// step, and "finished" only at a final answer), so the identical command resumes it instead of
// adding it twice. After its answer the same words are a new message ("yes" twice is two answers);
// a message the person sent in a session is always one.
function resumesLastFollowUp(
  record: RunRecord | undefined,
  last: Pick<FollowUp, 'message'> | undefined,
  target: Pick<RunTarget, 'followUp' | 'newMessage'>,
): boolean {
  if (target.newMessage || last === undefined || last.message !== target.followUp) return false;
  return record?.status !== 'finished';
}

// The follow-up instructions the run has recorded, with the steps that recorded them.
function recordedFollowUps(journal: RunJournal): FollowUp[] {
  return journal.history
    .entries(USER_STEP_KIND)
    .filter((entry) => entry.phase === 'result')
    .map((entry) => {
      const input = entry.input as { message?: unknown; changedFiles?: unknown };
      // The files the person changed, as recorded: the same input again, so the step replays.
      const changed = Array.isArray(input.changedFiles) ? { changedFiles: input.changedFiles as FollowUp['changedFiles'] } : {};
      return { message: String(input.message ?? ''), ...changed, step: entry.step };
    });
}

// The changes the run has recorded (config steps: a model, or a compaction asked for), with the steps that recorded them.
function recordedConfigChanges(journal: RunJournal): ConfigChange[] {
  return journal.history
    .entries(CONFIG_STEP_KIND)
    .filter((entry) => entry.phase === 'result')
    .flatMap((entry): ConfigChange[] => {
      const input = entry.input as { model?: unknown; compact?: unknown };
      if (typeof input.model === 'string') return [{ model: input.model, step: entry.step }];
      return input.compact === true ? [{ compact: true, step: entry.step }] : [];
    });
}
