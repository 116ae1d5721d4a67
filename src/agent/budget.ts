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

/** Counts a run's steps, model calls and estimated cost against its limits. */
export class Budget {
  steps = 0;
  turns = 0;
  cost = 0;
  private readonly limits: Limits;

  constructor(limits: Limits = {}) {
    this.limits = limits;
  }

  /** Counts one finished step; a model call also counts its usage, priced for `model`. */
  count(model?: { name: string; usage: Usage | undefined }): void {
    this.steps++;
    if (!model) return;
    this.turns++;
    const u = model.usage;
    if (u) this.cost += estimateCost(priceFor(model.name), { input: u.inputTokens, output: u.outputTokens, cacheCreation: u.cacheCreationInputTokens, cacheRead: u.cacheReadInputTokens });
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
