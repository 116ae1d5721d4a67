// Errors of replay: the loop asked for another step than the one recorded, or a one-shot step was
// found started and never finished.
// Tested in test/valve/replay.test.ts and test/valve/batch.test.ts.
import { SavepointError } from './savepoint-error.js';

/** What identifies a step at its position: its kind, its key (kind + digest of the input), and its description for people. */
export interface StepIdentity {
  kind: string;
  key: string;
  description: string;
}

/**
 * On replay, the loop asked for a different step than the one recorded at that position.
 * `differences` says which part of the call differs (the kind, the model, an input field, the
 * request digest), one phrase each, as history.ts found them.
 */
export class DivergenceError extends SavepointError<{
  run: string;
  position: number;
  recorded: StepIdentity;
  requested: StepIdentity;
  differences: string[];
}> {
  constructor(run: string, position: number, recorded: StepIdentity, requested: StepIdentity, differences: string[] = []) {
    const asked = requested.description === recorded.description ? 'asked for it again' : `asked for ${requested.description}`;
    const what = differences.length ? `, but ${differences.join('; and ')}` : '';
    super(
      'EDIVERGED',
      `Run ${run} diverged from its journal at step ${position}: the journal recorded ` +
        `${recorded.description}, and this time the agent ${asked}${what}. ` +
        `Replay must repeat the recorded history exactly (the task, model or code changed?). To keep ` +
        `the steps before it and go on live from there, run "savepoint fork ${run} --at ${position}".`,
      { run, position, recorded, requested, differences },
    );
  }
}

/**
 * A step that was started before a crash and never recorded a result, and nothing said to run it
 * again: the CLI's policy was `fail`, or a library caller gave the step no `onInFlight` answer
 * (`library`). A step recorded with `intent` is never silently repeated.
 */
export class InFlightError extends SavepointError<{ run: string; position: number; description: string; library: boolean }> {
  constructor(run: string, position: number, description: string, library = false) {
    super(
      'EINFLIGHT',
      `Step ${position} of run ${run} (${description}) was started before a crash and its outcome ` +
        `is unknown. It was not re-run. ` +
        (library
          ? `A step recorded with intent (not safe to repeat) is never run twice silently: give step() an ` +
            `onInFlight option that returns { rerun: true } to run it again, or { result, resolution } to ` +
            `record what happened instead.`
          : `Use "--in-flight rerun" to run it again, or the default "--in-flight report" to tell the ` +
            `model it may or may not have happened.`),
      { run, position, description, library },
    );
  }
}

/**
 * A step of a batch (an answer's reads run at the same time) threw with no result while a later
 * one of the batch was recorded: its position cannot be given back, so this process asks for no
 * further step (the journal would keep a hole before it). Opening the run again runs it.
 */
export class UnfinishedBatchError extends SavepointError<{ run: string; position: number }> {
  constructor(run: string, position: number) {
    super(
      'EBATCH',
      `Step ${position} of run ${run} failed while calls of the same answer, run at the same time, were ` +
        `recorded after it, so this process records no further step. Run the same command again: the ` +
        `recorded calls are handed back and step ${position} runs again.`,
      { run, position },
    );
  }
}
