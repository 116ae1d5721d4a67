// The turn a run is driven for now: the caller's options (its approver, rules, in-flight policy,
// signal, listener). A run held open between an interactive session's messages gets each next
// message's options here (hold.ts); everything built when the run opened reads the turn's from this
// one object, so nothing it was given goes stale and nothing reaches back for the run to ask.
import { COMPACT_STEP_KIND } from '../agent/compaction.js';
import type { Approver, PermissionCheck } from '../agent/tool-call.js';
import type { InFlightPolicy } from '../agent/in-flight.js';
import type { SessionEvent, SessionOptions } from './types.js';

/** The options of the turn under way, and its listener. */
export class RunTurn {
  private listener: (event: SessionEvent) => void;

  constructor(private current: SessionOptions) {
    this.listener = emitterFor(current);
  }

  /** Tells the turn's listener (a held run's next turn brings its own). */
  readonly emit = (event: SessionEvent): void => this.listener(event);

  /** The turn's options. */
  get options(): SessionOptions {
    return this.current;
  }

  /** The next turn of a held run: its options and listener from now on. */
  next(options: SessionOptions): void {
    this.current = options;
    this.listener = emitterFor(options);
  }

  /** The turn's approver. */
  get approve(): Approver | undefined {
    return this.current.approve;
  }

  /** The turn's allow and deny rules. */
  get permission(): PermissionCheck | undefined {
    return this.current.permission;
  }

  /** The turn's in-flight policy. */
  get inFlight(): InFlightPolicy | undefined {
    return this.current.inFlight;
  }

  /** The turn's abort signal (Ctrl-C, SIGTERM, SIGHUP). */
  get signal(): AbortSignal | undefined {
    return this.current.signal;
  }
}

// The session's events as the caller hears them. A compact step, live or replayed, is also told as
// a compaction with the conversation's size.
function emitterFor(options: SessionOptions): (event: SessionEvent) => void {
  const { onEvent } = options;
  return (event) => {
    onEvent?.(event);
    if ((event.type === 'recorded' || event.type === 'replayed') && event.kind === COMPACT_STEP_KIND) {
      const result = event.result as { tokensBefore?: number; tokensAfter?: number } | undefined;
      onEvent?.({
        type: 'compaction',
        position: event.position,
        replayed: event.type === 'replayed',
        tokensBefore: result?.tokensBefore ?? null,
        tokensAfter: result?.tokensAfter ?? null,
      });
    }
  };
}
