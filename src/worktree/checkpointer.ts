// The checkpoint a run's step records, taken whole-step: a run and its subagents share one working
// tree, and the steps that may change files (a write, an edit, a command), from the moment they start
// until their checkpoint is taken, hold one lock (FileStepLock), so each checkpoint's diff is that
// step's own work. The valve is handed a WorktreeCheckpointer when the run opens and asks it after a
// step that may change files: nothing climbs back to the session for it.
import type { SkippedFile } from './entries.js';
import type { WorktreeSnapshotter } from './snapshot.js';

/** One lock for the steps that may change files, in order of asking. */
export class FileStepLock {
  private tail: Promise<void> = Promise.resolve();

  /** Waits for the lock; the function returned releases it (once). */
  async acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const before = this.tail;
    this.tail = before.then(() => mine);
    await before;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  }

  /** Runs `work` holding the lock. */
  async holding<T>(work: () => Promise<T> | T): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }
}

/** The lock a step took when it started (a subagent's tool takes it then), released by its checkpoint. */
export interface HeldStep {
  release?: () => void;
}

/**
 * A run's checkpoints after its steps: the working tree through the run's snapshotter, under the
 * file-step lock. With `held` (a subagent's), the lock its step took when it started is the one the
 * checkpoint holds and releases (a step that never took it, a declined one, takes it now); without,
 * the checkpoint waits for the step another subagent is taking.
 */
export class WorktreeCheckpointer {
  constructor(
    private readonly snapshotter: WorktreeSnapshotter,
    private readonly lock: FileStepLock,
    private readonly held?: HeldStep,
  ) {}

  /**
   * The working tree now, as the next entry records it (its few new objects go into that append's
   * pack, durable with it); `paths`: the only files the step changed (an edit names its file).
   */
  async take(paths?: readonly string[]): Promise<{ tree: string; skipped: SkippedFile[] }> {
    const release = this.held?.release ?? (await this.lock.acquire());
    if (this.held) this.held.release = undefined;
    try {
      const hold = { hold: true };
      const snapshot = paths ? this.snapshotter.snapshotPaths(paths, hold) : this.snapshotter.snapshot(hold);
      return { tree: snapshot.tree, skipped: snapshot.skipped };
    } finally {
      release();
    }
  }
}
