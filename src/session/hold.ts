// A run held open between an interactive session's messages. Each message used to open its run
// again (the lock, every entry read back, the whole conversation replayed through the loop) before
// its request went out: a second's pause at 20,000 steps. A session that gives its entry points a
// SessionHold keeps the run it drove open instead: its journal and lock, its history's counts, and
// its agent loop waiting at the final answer with its conversation as it is. The next message to
// that run goes to the waiting loop and replays nothing. Anything else (another run, other
// settings, a turn that ended in an error, Ctrl-C or a limit) closes it, and the next message
// opens the run from the journal as before.
import type { RunOutcome, SessionOptions } from './types.js';

/** What the next message asks of a held run: a follow-up, a change of model, a compaction (as continueRun's options). */
export interface HeldRequest {
  message: string;
  model?: string;
  compact?: boolean;
  newMessage?: boolean;
}

/** A run driven to its answer and kept open, its loop waiting for the next message (drive.ts makes it). */
export interface HeldRun {
  readonly run: string;
  /** The session options it was opened with, as a string (fingerprint): other ones open the run again. */
  readonly fingerprint: string;
  /** Options that are not data (a provider, the tools, the environment): the same objects, or the run opens again. */
  readonly same: (options: SessionOptions) => boolean;
  /** Drives the next message through the waiting loop; resolves with that turn's outcome. */
  go(request: HeldRequest, options: SessionOptions): Promise<RunOutcome>;
  /** Ends the waiting loop and closes the run (its lock, MCP servers, spare shell). */
  close(): Promise<void>;
}

/**
 * The interactive session's hold on its run, given to startRun, resumeRun and continueRun as
 * `SessionOptions.hold`: the run a turn ended on stays open for the session's next message.
 * Close it when the session ends.
 */
export class SessionHold {
  private held: HeldRun | undefined;

  /** The run held open now, if any. */
  get run(): string | undefined {
    return this.held?.run;
  }

  /** Keeps `held` open for the next message (closing another run held before it). */
  async keep(held: HeldRun): Promise<void> {
    if (this.held && this.held !== held) await this.close();
    this.held = held;
  }

  /**
   * The held run, taken for the next message, when it is `run` and `options` would open it the
   * same way; otherwise whatever was held is closed (the caller opens the run from the journal).
   */
  async take(run: string | undefined, options: SessionOptions): Promise<HeldRun | undefined> {
    const held = this.held;
    if (!held) return undefined;
    this.held = undefined;
    if (run === held.run && held.fingerprint === optionsFingerprint(options) && held.same(options)) return held;
    await held.close();
    return undefined;
  }

  /** Closes the held run, if any. */
  async close(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    await held?.close();
  }
}

// What of the options shapes an opened run (its sandbox, MCP servers, pushing, limits): the data,
// without the turn's own callbacks and signal, what the entry points' own options ask of one turn
// (the task, the message, the model to change to, /compact) and the objects `same` compares.
const PER_TURN = new Set([
  'signal',
  'env',
  'model',
  'hold',
  'provider',
  'tools',
  'task',
  'fresh',
  'run',
  'message',
  'newMessage',
  'compact',
]);

/**
 * The options that shape an opened run, as one string: a held run goes on only under the same. A
 * run fenced by default (it is in a fetched journal: start.ts's fencedOptions) counts as the person
 * gave it, with no push of their own.
 */
export function optionsFingerprint(options: SessionOptions): string {
  const fenced = options.fencedFrom !== undefined;
  const kept = Object.entries(options).filter(
    ([name, value]) =>
      !PER_TURN.has(name) && typeof value !== 'function' && value !== undefined && !(fenced && (name === 'push' || name === 'fencedFrom')),
  );
  return JSON.stringify(Object.fromEntries(kept.sort(([a], [b]) => a.localeCompare(b))));
}
