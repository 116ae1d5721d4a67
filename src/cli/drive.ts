// Driving one run from the command line, shared by `run` and `resume`: open the run's journal,
// print every step as it happens, run the agent through the journal, and say what replay saved.
import type { Writable } from 'node:stream';
import { runAgent } from '../agent/loop.js';
import type { InFlightPolicy } from '../agent/in-flight.js';
import { openJournal } from '../durable/run-journal.js';
import { MissingCredentialsError } from '../errors/index.js';
import { createProvider, hasAnthropicCredentials, SCRIPT_PREFIX } from '../model/index.js';
import type { ModelProvider } from '../model/types.js';
import { createTools } from '../tools/index.js';
import { createApprover } from './approval.js';
import { StepPrinter } from './step-printer.js';
import { styleFor } from './style.js';

export interface DriveOptions {
  // The repository root the agent works in.
  root: string;
  run: string;
  task: string;
  model: string;
  yes: boolean;
  maxSteps?: number;
  inFlight: InFlightPolicy;
  out?: Writable & { isTTY?: boolean; columns?: number };
  interactive?: boolean;
  env?: NodeJS.ProcessEnv;
}

// Runs (or resumes, or replays) one run to its end; returns the process exit code.
export async function driveRun(options: DriveOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const env = options.env ?? process.env;
  const style = styleFor(out, env);
  const printer = new StepPrinter(out, style);
  const journal = await openJournal({ dir: options.root, run: options.run, task: options.task, model: options.model, onEvent: printer.onEvent });
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    out.write(style.red('\n  Stopping: the step in progress is left unrecorded; every finished step is kept.\n'));
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const record = journal.runRecord;
    const recorded = journal.history.finishedCount;
    out.write(`${style.bold('savepoint')}  run ${style.cyan(options.run)}  ${style.dim('·')}  model ${options.model}\n`);
    if (record?.status === 'finished') out.write(style.dim(`  This run finished before: replaying its ${recorded} steps from the journal.\n`));
    else if (recorded > 0) out.write(style.dim(`  Resuming: ${recorded} finished steps in the journal replay first, then it goes live.\n`));
    const scripted = options.model.startsWith(SCRIPT_PREFIX);
    if (record?.status !== 'finished' && !scripted && !hasAnthropicCredentials(env)) throw new MissingCredentialsError(options.model);

    let provider: Promise<ModelProvider> | undefined;
    const outcome = await runAgent({
      journal,
      task: options.task,
      model: options.model,
      provider: () => (provider ??= createProvider(options.model)),
      tools: createTools(options.root),
      maxSteps: options.maxSteps,
      inFlight: options.inFlight,
      approve: createApprover({ yes: options.yes, interactive: options.interactive ?? Boolean(process.stdin.isTTY) }),
      onText: printer.onText,
      signal: controller.signal,
    });
    const saved = printer.summary();
    if (outcome.status === 'max-steps') {
      out.write(`\n${style.yellow(`Stopped after ${outcome.steps} steps (--max-steps).`)} Run again with a higher --max-steps to continue.\n`);
      if (saved) out.write(`${saved}\n`);
      return 1;
    }
    await journal.finish('finished', { final: outcome.final });
    out.write(`\n${style.bold('Final answer')}\n${outcome.final || '(the model gave no text)'}\n`);
    if (saved) out.write(`\n${style.green(saved)}\n`);
    return 0;
  } catch (error) {
    if (controller.signal.aborted) {
      out.write(`Stopped. Run the same command again to continue from step ${journal.history.lastPosition + 1}.\n`);
      return 130;
    }
    await journal.finish('failed', { error: (error as Error).message }).catch(() => {});
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    journal.close();
  }
}
