// What to do with a tool call found started-but-unrecorded after a crash (SPEC, Replay). Model
// calls and reads never get here: they record no intent, so they are simply run again.
import { InFlightError } from '../errors/index.js';
import type { InFlightAnswer, InFlightStep } from '../valve/run-journal.js';
import type { ToolResult } from '../tools/types.js';

/** report: tell the model the truth (default); rerun: run it again; fail: stop the run. */
export type InFlightPolicy = 'report' | 'rerun' | 'fail';

/** Every in-flight policy, for the --in-flight flag. */
export const IN_FLIGHT_POLICIES: readonly InFlightPolicy[] = ['report', 'rerun', 'fail'];

/** The answer the valve records for a tool call found in flight, under `policy`. */
export function inFlightAnswer(policy: InFlightPolicy, step: InFlightStep): InFlightAnswer<ToolResult> {
  if (policy === 'rerun') return { rerun: true };
  if (policy === 'fail') throw new InFlightError(step.run, step.position, step.description);
  const summary = step.interrupted
    ? 'outcome unknown: interrupted by a signal, not re-run'
    : 'outcome unknown: started before a crash, not re-run';
  const how = step.interrupted
    ? 'the run was stopped by a signal (Ctrl-C, SIGTERM or SIGHUP) and ended'
    : 'the process running it was stopped';
  return {
    resolution: 'in-flight-reported',
    summary,
    result: {
      isError: true,
      summary,
      output:
        `This step (${step.description}) was started at ${step.startedAt}, and ${how} ` +
        `before its result was recorded. Its outcome is unknown: it may have finished, partly ` +
        `run, or not run at all. It was not run again. Check the files or run it again yourself if you need its result.`,
    },
  };
}
