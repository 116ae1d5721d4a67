// How long `--push` waits: one git call's timeout and the window pushes may keep failing in, from
// the flags (--push-timeout, --push-retry), else the environment (SAVEPOINT_PUSH_TIMEOUT,
// SAVEPOINT_PUSH_RETRY), else the pusher's defaults. All in seconds.
import { UsageError } from '../errors/index.js';
import type { PusherOptions } from '../journal/pusher.js';
import type { SessionOptions } from './types.js';

/** The pusher's limits for a session, in ms; an environment value that is not a positive number is a UsageError. */
export function pusherOptions(options: Pick<SessionOptions, 'pushTimeout' | 'pushRetry'>, env: NodeJS.ProcessEnv): Pick<PusherOptions, 'timeoutMs' | 'retryForMs'> {
  const timeout = options.pushTimeout ?? seconds(env, 'SAVEPOINT_PUSH_TIMEOUT', '--push-timeout');
  const retry = options.pushRetry ?? seconds(env, 'SAVEPOINT_PUSH_RETRY', '--push-retry');
  return { ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}), ...(retry !== undefined ? { retryForMs: retry * 1000 } : {}) };
}

function seconds(env: NodeJS.ProcessEnv, name: string, flag: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!value.trim() || !Number.isFinite(n) || n <= 0) throw new UsageError(`${name} needs a number of seconds above 0 (as ${flag} takes), not "${value}".`);
  return n;
}
