// `--push` in a run's life: the background pusher (journal/pusher.ts) made with the run's limits,
// and its flush at the run's end; what a failure says when the push was not asked for (a fetched run). How long it waits: one git call's timeout and the window pushes
// may keep failing in, from the flags (--push-timeout, --push-retry), else the environment
// (SAVEPOINT_PUSH_TIMEOUT, SAVEPOINT_PUSH_RETRY), else the pusher's defaults. All in seconds.
import { PushFailedError, PushStalledError, UsageError } from '../errors/index.js';
import { JournalPusher, type PusherOptions } from '../journal/pusher.js';
import type { JournalStore } from '../journal/store.js';
import type { SessionEvent, SessionOptions } from './types.js';

/** The run's pusher when `--push` was given: its events go to `emit`, Ctrl-C ends its waits. */
export function createRunPusher(
  store: JournalStore,
  run: string,
  options: SessionOptions,
  env: NodeJS.ProcessEnv,
  emit: (event: SessionEvent) => void,
): JournalPusher | undefined {
  if (!options.push) return undefined;
  return new JournalPusher(() => store, options.push, run, {
    ...pusherOptions(options, env),
    onEvent: emit,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * What is left goes to the remote now (waiting at most `capMs` when given), or a push-behind event
 * says which steps did not and how to push them later; hands back why. Never throws: the run's
 * outcome stays its own.
 */
export async function flushRunPushes(
  pusher: JournalPusher | undefined,
  emit: (event: SessionEvent) => void,
  capMs?: number,
): Promise<Error | undefined> {
  if (!pusher) return undefined;
  const report = await pusher.flush(capMs);
  pusher.close();
  if (!report.unpushed.length) return undefined;
  emit({
    type: 'push-behind',
    remote: report.remote,
    unpushed: report.unpushed,
    reason: report.reason ?? '',
    command: `git push ${report.remote} agent-journal`,
  });
  return report.error;
}

/**
 * A push failure of a run that pushes only because a fetched journal holds it (`fencedFrom`, not
 * asked for): its message also says how to go on without the fence, and what that gives up. A
 * rejection (another machine moved the run on) is the fence working and gets no such advice.
 */
export function withFenceAdvice<T>(error: T, fencedFrom: string | undefined): T {
  if (fencedFrom === undefined || !(error instanceof PushFailedError || error instanceof PushStalledError)) return error;
  error.message +=
    ` This run pushes to ${fencedFrom} because ${fencedFrom}'s journal holds it (it is fenced against ${fencedFrom}); ` +
    `where ${fencedFrom} cannot take pushes, --no-push goes on without the fence, and then nothing stops another machine from running the same step again.`;
  return error;
}

/** The pusher's limits for a session, in ms; an environment value that is not a positive number is a UsageError. */
export function pusherOptions(
  options: Pick<SessionOptions, 'pushTimeout' | 'pushRetry'>,
  env: NodeJS.ProcessEnv,
): Pick<PusherOptions, 'timeoutMs' | 'retryForMs'> {
  const timeout = options.pushTimeout ?? seconds(env, 'SAVEPOINT_PUSH_TIMEOUT', '--push-timeout');
  const retry = options.pushRetry ?? seconds(env, 'SAVEPOINT_PUSH_RETRY', '--push-retry');
  return { ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}), ...(retry !== undefined ? { retryForMs: retry * 1000 } : {}) };
}

function seconds(env: NodeJS.ProcessEnv, name: string, flag: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!value.trim() || !Number.isFinite(n) || n <= 0)
    throw new UsageError(`${name} needs a number of seconds above 0 (as ${flag} takes), not "${value}".`);
  return n;
}
