// The process groups one run's commands run in, in this process: each recorded on this machine
// while it runs (git-run-local.ts, under the common git directory; never on the branch: pids mean
// nothing elsewhere), so a later attempt stops one a crash left running; and stopped here when the
// run is taken over while this process was paused (its lock lost), as the new owner may not reach
// them. The valve hands the step that started a group; tracking is not the valve's own job.
import { stopOwnCommands } from '../locks/live-commands.js';
import type { RunLock } from '../locks/run-lock.js';
import type { RunLocal } from './journal-storage.js';

/** A run's commands' process groups still running in this process. */
export class RunCommands {
  private readonly live = new Set<number>();

  /** `step`: the run's step now (the one that starts a command); `lock`: the run's, whose loss stops them. */
  constructor(
    private readonly local: RunLocal,
    private readonly run: string,
    lock: RunLock,
    private readonly step: () => number,
  ) {
    lock.onLost(() => stopOwnCommands(this.live));
  }

  /**
   * Records a process group the current step started; `outlivesStep`: a background command, which
   * this process may still run when it opens the run again.
   */
  track(pgid: number, description: string, outlivesStep = false): void {
    this.live.add(pgid);
    this.local.trackCommand(this.run, pgid, this.step(), description, outlivesStep);
  }

  /** Forgets a process group of `track` once it has ended. */
  untrack(pgid: number): void {
    this.live.delete(pgid);
    this.local.untrackCommand(this.run, pgid);
  }
}
