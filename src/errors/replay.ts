// Errors of replay: the loop asked for another step than the one recorded, or a one-shot step was
// found started and never finished.
import { SavepointError } from './savepoint-error.js';

export interface StepCall {
  kind: string;
  key: string;
  description: string;
}

/**
 * On replay, the loop asked for a different step than the one recorded at that position.
 * `differences` says which part of the call differs (the kind, the model, an input field, the
 * request digest), one phrase each, as history.ts found them.
 */
export class DivergenceError extends SavepointError<{ run: string; position: number; recorded: StepCall; requested: StepCall; differences: string[] }> {
  constructor(run: string, position: number, recorded: StepCall, requested: StepCall, differences: string[] = []) {
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

/** A step that was started before a crash and never recorded a result, with the policy set to fail. */
export class InFlightError extends SavepointError<{ run: string; position: number; description: string }> {
  constructor(run: string, position: number, description: string) {
    super(
      'EINFLIGHT',
      `Step ${position} of run ${run} (${description}) was started before a crash and its outcome ` +
        `is unknown. It was not re-run. Use "--in-flight rerun" to run it again, or the default ` +
        `"--in-flight report" to tell the model it may or may not have happened.`,
      { run, position, description },
    );
  }
}
