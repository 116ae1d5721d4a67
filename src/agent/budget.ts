// The user's limits on a run: none by default, so a legitimate long run is never stopped by a cap
// it did not ask for. Each limit counts the whole run (replayed steps too), so the same command
// with a higher limit goes on where the lower one stopped. Cost is estimated from the usage each
// model step recorded, at the list prices of src/model/pricing.ts.
import { estimateCost, priceFor } from '../model/pricing.js';
import type { Usage } from '../model/types.js';

/** The limits a run may be given; each one left out does not apply. */
export interface Limits {
  /** Steps of any kind (model calls, tool calls, follow-ups, compactions). */
  maxSteps?: number;
  /** Model calls (compactions included). */
  maxTurns?: number;
  /** Estimated US dollars spent on model calls. */
  maxCost?: number;
}

/** Which limit stopped a run, what it was set to, and where the run stood. */
export interface LimitReached {
  limit: 'max-steps' | 'max-turns' | 'max-cost';
  /** The value the user gave. */
  value: number;
  /** Where the run stood when it stopped: steps, model calls or estimated dollars. */
  reached: number;
}

/**
 * Holds a run's model calls and estimated cost against its limits, and its steps, which it does not
 * count: `position` is the valve's (RunJournal.position, the last step the run has reached, a step
 * being taken included), the run's one step counter.
 */
export class Budget {
  turns = 0;
  cost = 0;
  private readonly limits: Limits;
  private readonly position: () => number;

  constructor(limits: Limits = {}, position: () => number = () => 0) {
    this.limits = limits;
    this.position = position;
  }

  /** The steps the run has reached: the valve's position. */
  get steps(): number {
    return this.position();
  }

  /** Counts one model call's usage, priced for `model`. */
  countModelCall(model: { name: string; usage: Usage | undefined }): void {
    this.turns++;
    const u = model.usage;
    if (u)
      this.cost += estimateCost(priceFor(model.name), {
        input: u.inputTokens,
        output: u.outputTokens,
        cacheCreation: u.cacheCreationInputTokens,
        cacheRead: u.cacheReadInputTokens,
      });
  }

  /** The limit that forbids the next step (a model call when `modelCall`), or undefined to go on. */
  exceeded(modelCall: boolean): LimitReached | undefined {
    const { maxSteps, maxTurns, maxCost } = this.limits;
    if (maxSteps !== undefined && this.steps >= maxSteps) return { limit: 'max-steps', value: maxSteps, reached: this.steps };
    if (!modelCall) return undefined;
    if (maxTurns !== undefined && this.turns >= maxTurns) return { limit: 'max-turns', value: maxTurns, reached: this.turns };
    if (maxCost !== undefined && this.cost >= maxCost) return { limit: 'max-cost', value: maxCost, reached: this.cost };
    return undefined;
  }
}
