// Errors of `--push` besides a rejected or impossible push (journal.ts): a remote that stayed down,
// slow or silent for longer than the run may wait before a step another machine must see.
// Tested in test/session/pushing.test.ts.
import { SavepointError } from './savepoint-error.js';

/** What PushStalledError knows: the remote, the run, why the last push failed, and for how long pushes failed. */
export interface PushStalledData {
  remote: string;
  run: string;
  /** The last push's failure, as git (or the timeout) told it, control characters shown. */
  reason: string;
  /** How long pushes had been failing when the run gave up waiting, in seconds. */
  failingSeconds: number;
  /** What the run was about to do: a one-shot effect (`run_bash "make deploy"`); undefined: it was ending. */
  waitingFor?: string;
}

/**
 * The journal could not be pushed for the whole retry window (--push-retry) when a push had to
 * land: before a one-shot effect, which another machine must see as started, or at the run's end.
 * Every step is recorded locally; the identical command goes on once the remote answers.
 */
export class PushStalledError extends SavepointError<PushStalledData> {
  constructor(data: PushStalledData) {
    const failing = `The journal could not be pushed to ${data.remote}${data.failingSeconds ? ` for ${data.failingSeconds} s` : ''} (${data.reason})`;
    super(
      'EPUSHSTALLED',
      data.waitingFor === undefined
        ? `${failing}, and run ${data.run} ended with steps that are only in this machine's agent-journal branch. ` +
            `Nothing is lost: push them with "git push ${data.remote} agent-journal" once ${data.remote} answers ` +
            `(--push-timeout and --push-retry set how long savepoint waits).`
        : `${failing}, so run ${data.run} stops here, before ${data.waitingFor}: another machine must be able to see a ` +
            `one-shot effect as started before it runs. Every step is recorded in this machine's agent-journal branch; ` +
            `run the same command again to go on once ${data.remote} answers (--push-timeout and --push-retry set how ` +
            `long savepoint waits).`,
      data,
    );
  }
}
