// How an attempt ended, in the words every view uses (`log`, the HTML timeline): one place, so the
// terminal and the page never disagree about whether an attempt finished or crashed.
import type { AttemptView } from './summary-types.js';

/** `finished`, `stopped at --max-steps`, `interrupted`, `failed: <error>`, `crashed with #4 in flight`, `running`. */
export function attemptEndingText(a: AttemptView): string {
  const e = a.ended;
  switch (e.how) {
    case 'finished':
      return 'finished with the final answer';
    case 'limit':
      return `stopped at --${e.limit ?? 'a limit'}`;
    case 'interrupted':
      return a.leftInFlight !== null ? `interrupted (#${a.leftInFlight} in flight)` : 'interrupted';
    case 'failed':
      return e.error ? `failed: ${e.error}` : 'failed';
    case 'crashed':
      if (a.leftInFlight !== null) return `crashed with #${a.leftInFlight} in flight`;
      // Nothing of it in the journal but its own line in run.json (written before it ran a step again).
      if (a.liveSteps === 0)
        return a.rerun !== null
          ? `killed before it recorded anything, while running #${a.rerun} again`
          : 'killed before it recorded anything';
      return 'crashed';
    case 'running':
      return 'running';
  }
}

/** Whether an ending is bad news (drawn red): a crash or a failure. */
export function endedBadly(a: AttemptView): boolean {
  return a.ended.how === 'crashed' || a.ended.how === 'failed';
}
