// How one answer's tool calls are run: calls whose tools allow it (Tool.maxConcurrent: the reads)
// run at the same time as their neighbours, at most that many of one tool at once; any other call
// (a write, an edit, a command) runs alone, after every call before it and before every call after
// it. Calls start strictly in the order of the answer, so each claims its journal position in that
// order (the valve numbers a step when it is asked for it), whatever order they finish in; the
// results come back in call order. Pure scheduling: what a call does is the caller's.
import type { StepBatch } from '../valve/step-types.js';

/** What the scheduler needs of the loop: each call's concurrency, the check before it starts, and how it runs. */
export interface CallPlan<Call, Result, Stop> {
  /** The call's tool and how many calls of it may run at once beside others; undefined: it runs alone. */
  concurrency(call: Call): { tool: string; max: number } | undefined;
  /** Asked just before each call starts, in call order: a value stops the answer there (no later call starts). */
  stopBefore(call: Call): Stop | undefined;
  /** Runs one call; `batch` is shared by the calls of its group, when they are several. */
  run(call: Call, batch: StepBatch | undefined): Promise<Result>;
}

/**
 * Runs `calls` in groups: a run of consecutive calls that may run at once is one group, any other
 * call a group of its own; groups one after another. Returns the results in call order (those
 * started, when `stopBefore` stopped the answer, with its value). Every call started has settled
 * before this returns or throws: nothing of the answer still runs when the loop goes on, or fails.
 * A throw is the first one in call order, once its whole group has settled.
 */
export async function runCalls<Call, Result, Stop>(
  calls: readonly Call[],
  plan: CallPlan<Call, Result, Stop>,
): Promise<{ results: Result[]; stopped?: Stop }> {
  const results: Result[] = [];
  for (const group of groupsOf(calls, plan)) {
    const { results: done, stopped } = await runGroup(group, plan);
    results.push(...done);
    if (stopped !== undefined) return { results, stopped };
  }
  return { results };
}

// Consecutive calls that may run at once together; every other call alone.
function groupsOf<Call>(calls: readonly Call[], plan: CallPlan<Call, unknown, unknown>): Call[][] {
  const groups: Call[][] = [];
  let open: Call[] | undefined;
  for (const call of calls) {
    if (!plan.concurrency(call)) {
      open = undefined;
      groups.push([call]);
    } else if (open) {
      open.push(call);
    } else {
      groups.push((open = [call]));
    }
  }
  return groups;
}

// One group: each call starts in order once its tool has a free place (a call waiting for one holds
// back the calls after it, so positions stay in call order); then every started call settles.
async function runGroup<Call, Result, Stop>(
  group: Call[],
  plan: CallPlan<Call, Result, Stop>,
): Promise<{ results: Result[]; stopped?: Stop }> {
  const batch: StepBatch | undefined = group.length > 1 ? { size: group.length } : undefined;
  const running = new Map<string, Set<Promise<unknown>>>();
  const started: Array<Promise<Result>> = [];
  let stopped: Stop | undefined;
  let settled: Array<PromiseSettledResult<Result>>;
  try {
    for (const call of group) {
      const limit = plan.concurrency(call);
      const mine = limit ? (running.get(limit.tool) ?? running.set(limit.tool, new Set()).get(limit.tool)!) : undefined;
      while (limit && mine!.size >= limit.max) await Promise.race(mine!);
      if ((stopped = plan.stopBefore(call)) !== undefined) break;
      const promise = plan.run(call, batch);
      started.push(promise);
      if (mine) {
        const done: Promise<unknown> = promise.then(
          () => mine.delete(done),
          () => mine.delete(done),
        );
        mine.add(done);
      }
    }
  } finally {
    // Also when a check before a call threw: the calls already started settle first.
    settled = await Promise.allSettled(started);
  }
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return {
    results: settled.map((outcome) => (outcome as PromiseFulfilledResult<Result>).value),
    ...(stopped !== undefined ? { stopped } : {}),
  };
}

/** `ask` with its calls one after another: the person answers one question at a time, whatever runs beside it. */
export function oneAtATime<Args extends unknown[], R>(ask: (...args: Args) => Promise<R>): (...args: Args) => Promise<R> {
  let last: Promise<unknown> = Promise.resolve();
  return (...args) => {
    const turn = last.then(() => ask(...args));
    last = turn.catch(() => undefined);
    return turn;
  };
}
