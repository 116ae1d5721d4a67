// Asking a person before a live command or write. Replayed steps never ask: they do not run.
import { createInterface } from 'node:readline/promises';
import { ApprovalRequiredError } from '../errors/index.js';
import type { Approver } from '../agent/tool-call.js';

/** `--yes` approves everything; a terminal asks (y / n / a = yes to all); otherwise a live step fails. */
export function createApprover(options: { yes: boolean; interactive: boolean; input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream }): Approver {
  if (options.yes) return async () => true;
  if (!options.interactive) {
    return async (tool, input) => {
      throw new ApprovalRequiredError(tool.describe(input));
    };
  }
  let all = false;
  return async (tool, input) => {
    if (all) return true;
    const rl = createInterface({ input: options.input ?? process.stdin, output: options.output ?? process.stderr });
    try {
      const answer = (await rl.question(`  Allow ${tool.describe(input)}? [y]es / [n]o / [a]ll: `)).trim().toLowerCase();
      if (answer === 'a' || answer === 'all') all = true;
      return all || answer === 'y' || answer === 'yes';
    } finally {
      rl.close();
    }
  };
}
