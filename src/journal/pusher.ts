// `--push <remote>` in the background. Each append only tells the pusher the branch moved; one push
// at a time carries the tip as it is then (so a slow remote gets fewer, larger pushes, never one per
// step), while the run goes on; it starts a moment after the append, so appends that come together
// go together. A push that fails for a passing reason (down, slow, busy, silent) is
// tried again with backoff: 0.25 s doubling to 5 s. Two moments must wait for the remote: before a
// one-shot effect (a command, an MCP call that changes things), every earlier append and then the
// effect's intent must be there, because another machine resuming the run must see it as started;
// and the run's end, which flushes what is left. Those give up once pushes have failed for the
// retry window (--push-retry), saying so. A final failure (another machine's run, no permission)
// stops the run at its next append.
import { PushRejectedError, PushStalledError } from '../errors/index.js';
import { pushOnce, stopGits } from './push.js';
import type { JournalStore } from './store.js';

/** What the pusher tells the run as it goes (the CLI prints them; --json passes them on). */
export type PushEvent =
  /** A push failed for a passing reason; the next try is in `waitMs`. */
  | { type: 'push-retrying'; remote: string; reason: string; waitMs: number; failingForMs: number }
  /** Git reported the push failed, but the remote has the commit: nothing is lost. */
  | { type: 'push-reached'; remote: string; commit: string; reported: string }
  /** Pushes land again after failing `failures` times. */
  | { type: 'push-caught-up'; remote: string; failures: number };

/** How long a push may take, how long to keep retrying, and who hears about it. */
export interface PusherOptions {
  /** One git call's limit (push, ls-remote, fetch), in ms. Default 30 s. */
  timeoutMs?: number;
  /** How long pushes may keep failing before a push that must land gives up, in ms. Default 60 s. */
  retryForMs?: number;
  onEvent?: (event: PushEvent) => void;
  /** Aborting it (Ctrl-C) ends a wait before a one-shot effect at once: the effect does not run. */
  signal?: AbortSignal;
}

/** What a flush at the run's end found: everything on the remote, or the steps that are not and why. */
export interface FlushReport {
  remote: string;
  /** The appends that did not reach the remote, as their commit subjects name them (`#4`, `run.json`). */
  unpushed: string[];
  /** Why they did not (the last failure). */
  reason?: string;
  /** The failure as an error: the push failed for good (EPUSHFAILED, EPUSHREJECTED) or kept failing (EPUSHSTALLED). */
  error?: Error;
}

/** The longest one git call of a push may take before it is given up and tried again (`--push-timeout`). */
export const DEFAULT_PUSH_TIMEOUT_MS = 30_000;
/** How long pushes may keep failing before the run stops at its next one-shot effect (`--push-retry`). */
export const DEFAULT_PUSH_RETRY_MS = 60_000;
const FIRST_BACKOFF_MS = 250;
// A push that nothing waits for starts this long after the append that asks for it, so the appends
// that come at once (a batch of reads, a final answer and the run's record) go in one push: a
// one-shot effect and the run's end, which wait for the remote, push at once.
const GATHER_MS = 100;
const MAX_BACKOFF_MS = 5_000;

interface Waiter {
  seq: number;
  /** What the run waits to do, for the message (undefined: its end). */
  what: string | undefined;
  /** Give up at this time even if the retry window has not passed (the end after Ctrl-C). */
  capAt?: number;
  resolve(): void;
  reject(error: Error): void;
}

/** Pushes one run's journal branch to `remote` in the background; see the header. */
export class JournalPusher {
  readonly remote: string;
  private readonly timeoutMs: number;
  private readonly retryForMs: number;
  // Appends get numbers in order; `landedSeq` is the last one known to be on the remote.
  private seq = 0;
  private landedSeq = 0;
  private readonly appended: Array<{ seq: number; commit: string }> = [];
  private waiters: Waiter[] = [];
  private working: Promise<void> | undefined;
  private fatal: Error | undefined;
  private failingSince: number | undefined;
  private failures = 0;
  private lastReason = '';
  private closed = false;
  private toldReached = false;
  // The process groups of this pusher's git calls under way (close ends them).
  private readonly gits = new Set<number>();
  // Ends the wait between tries at once (close).
  private wake: (() => void) | undefined;
  // The push an append asked for, GATHER_MS later (kick starts it sooner).
  private gathering: NodeJS.Timeout | undefined;
  /** How many pushes were started (round-trips to the remote's receive side, retries included). */
  pushes = 0;

  constructor(
    private readonly getStore: () => JournalStore,
    remote: string,
    private readonly run: string,
    private readonly options: PusherOptions = {},
  ) {
    this.remote = remote;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PUSH_TIMEOUT_MS;
    this.retryForMs = options.retryForMs ?? DEFAULT_PUSH_RETRY_MS;
    options.signal?.addEventListener('abort', () => this.stopFences(options.signal!.reason), { once: true });
  }

  /**
   * JournalStore's afterAppend: the branch moved to `commit`. A fence (an intent) waits until the
   * remote has it; anything else returns at once. A final failure of an earlier push is thrown here.
   */
  readonly afterAppend = async (commit: string, append: { fence?: boolean; what?: string } = {}): Promise<void> => {
    this.appended.push({ seq: ++this.seq, commit });
    if (append.fence) this.kick();
    else this.kickSoon();
    if (this.fatal) throw this.fatal;
    if (append.fence) await this.until(this.seq, append.what ?? 'a one-shot effect');
  };

  /** JournalStore's beforeFence: waits until every append so far is on the remote (or gives up). */
  readonly settle = (what = 'a one-shot effect'): Promise<void> => (this.fatal ? Promise.reject(this.fatal) : this.until(this.seq, what));

  /**
   * At the run's end: waits for what is left (at most `capMs` when given) and says what did not
   * land. Never throws: the run's own outcome stays what it was.
   */
  async flush(capMs?: number): Promise<FlushReport> {
    try {
      await this.until(this.seq, undefined, capMs);
      return { remote: this.remote, unpushed: [] };
    } catch (error) {
      const failure = this.fatal ?? (error as Error);
      return {
        remote: this.remote,
        unpushed: await this.unpushed(),
        reason: this.fatal ? finalReason(this.fatal) : this.lastReason || failure.message,
        error: failure,
      };
    }
  }

  /** Stops retrying and ends a push in progress: the run is over. */
  close(): void {
    this.closed = true;
    clearTimeout(this.gathering);
    this.wake?.();
    stopGits(this.gits);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('the run ended'));
  }

  private until(seq: number, what: string | undefined, capMs?: number): Promise<void> {
    if (seq <= this.landedSeq) return Promise.resolve();
    if (this.fatal) return Promise.reject(this.fatal);
    let cap: NodeJS.Timeout | undefined;
    const capAt = capMs !== undefined ? Date.now() + capMs : undefined;
    const waiting = new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq, what, resolve, reject, ...(capAt !== undefined ? { capAt } : {}) });
      this.kick();
      // The timer runs on a monotonic clock and Date.now() is the wall clock: it can fire a
      // millisecond or two before capAt by Date.now() (more when the wall clock is set back), and
      // then gave up on no one, leaving Ctrl-C's flush to the next failed push, after the deadline.
      // Its firing is the cap passing, so the time it gives up at is never before capAt.
      if (capAt !== undefined) cap = setTimeout(() => this.giveUp(Math.max(Date.now(), capAt)), capMs);
    });
    return waiting.finally(() => clearTimeout(cap));
  }

  // A push GATHER_MS from now, unless one is under way (it goes on with the new tip) or asked for.
  private kickSoon(): void {
    if (this.working || this.closed || this.gathering) return;
    this.gathering = setTimeout(() => this.kick(), GATHER_MS);
    this.gathering.unref(); // the run's end flushes what is left: this timer holds nothing up
  }

  private kick(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.working || this.closed) return;
    this.working = this.work().finally(() => {
      this.working = undefined;
      if (this.seq > this.landedSeq && !this.fatal && !this.closed) this.kick(); // appended as the loop ended
    });
  }

  // One push at a time, of the tip as it is when the push starts, until the remote has every append.
  private async work(): Promise<void> {
    let backoff = FIRST_BACKOFF_MS;
    let merges = 0;
    while (!this.closed && !this.fatal && this.seq > this.landedSeq) {
      const store = this.getStore();
      const upto = this.seq;
      const tip = store.tip!;
      this.pushes++;
      const attempt = await pushOnce(store, this.remote, this.run, tip, this.timeoutMs, this.gits).catch((error: unknown) => ({
        outcome: 'passing' as const,
        reason: (error as Error).message,
      }));
      if (this.closed) return;
      if (attempt.outcome === 'landed') {
        // Said once: a remote that always answers so (a proxy's timeout) would say it at every push.
        if (attempt.reported && !this.toldReached)
          this.tell({ type: 'push-reached', remote: this.remote, commit: tip, reported: attempt.reported });
        if (attempt.reported) this.toldReached = true;
        if (this.failingSince !== undefined) this.tell({ type: 'push-caught-up', remote: this.remote, failures: this.failures });
        this.failingSince = undefined;
        this.failures = 0;
        backoff = FIRST_BACKOFF_MS;
        merges = 0;
        this.landed(upto);
      } else if (attempt.outcome === 'merged') {
        if (++merges > 3) this.fail(new PushRejectedError(this.run, this.remote, [])); // the remote keeps moving on
      } else if (attempt.outcome === 'final') {
        this.fail(attempt.error);
      } else {
        const now = Date.now();
        this.failingSince ??= now;
        this.failures++;
        this.lastReason = attempt.reason;
        this.giveUp(now);
        this.tell({
          type: 'push-retrying',
          remote: this.remote,
          reason: attempt.reason,
          waitMs: backoff,
          failingForMs: now - this.failingSince,
        });
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  // The wait before the next try. It keeps the process alive (a run waiting at a fence has nothing
  // else to wait on), so close() ends it.
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => ((this.wake = undefined), resolve()), ms);
      this.wake = () => (clearTimeout(timer), (this.wake = undefined), resolve());
    });
  }

  // Everything appended up to `seq` is on the remote.
  private landed(seq: number): void {
    this.landedSeq = Math.max(this.landedSeq, seq);
    while (this.appended.length && this.appended[0]!.seq <= this.landedSeq) this.appended.shift();
    const [done, waiting] = partition(this.waiters, (w) => w.seq <= this.landedSeq);
    this.waiters = waiting;
    for (const waiter of done) waiter.resolve();
  }

  // Pushes have failed for the retry window (or a waiter's cap passed): the waiters stop waiting.
  private giveUp(now: number): void {
    const window = this.failingSince !== undefined && now - this.failingSince >= this.retryForMs;
    const [late, waiting] = partition(this.waiters, (w) => window || (w.capAt !== undefined && now >= w.capAt));
    this.waiters = waiting;
    const failingMs = this.failingSince === undefined ? 0 : now - this.failingSince;
    for (const waiter of late) {
      const reason = this.lastReason || `a push was still under way when the run had to end`;
      waiter.reject(
        new PushStalledError({
          remote: this.remote,
          run: this.run,
          reason,
          failingSeconds: Number((failingMs / 1000).toFixed(1)),
          ...(waiter.what !== undefined ? { waitingFor: waiter.what } : {}),
        }),
      );
    }
  }

  // Ctrl-C: the waits before one-shot effects end (the end's flush still waits, for its cap).
  private stopFences(reason: unknown): void {
    const [fences, others] = partition(this.waiters, (w) => w.capAt === undefined);
    this.waiters = others;
    for (const waiter of fences) waiter.reject(reason instanceof Error ? reason : new Error('the run was stopped'));
  }

  private fail(error: Error): void {
    this.fatal = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  // The appends not on the remote, as their commit subjects name them: `#4`, or `run.json`.
  private async unpushed(): Promise<string[]> {
    const store = this.getStore();
    const names: string[] = [];
    for (const { commit } of this.appended) {
      const subject = (await store.objects.readCommit(commit).catch(() => undefined))?.message.split('\n')[0] ?? '';
      const step = /^\S+ #(\d+) /.exec(subject)?.[1];
      const name = step ? `#${step}` : 'run.json';
      if (names.at(-1) !== name) names.push(name);
    }
    return names;
  }

  private tell(event: PushEvent): void {
    this.options.onEvent?.(event);
  }
}

// A final failure in a few words (its error's own message says it all, once).
function finalReason(error: Error): string {
  return error instanceof PushRejectedError
    ? 'another machine moved this run on there (EPUSHREJECTED)'
    : `the remote refused the push for good (${(error as { code?: string }).code ?? error.name})`;
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
