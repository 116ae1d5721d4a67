// A run on the terminal, shared by `run`, `resume` and `continue`: the session does the work; this
// file turns its events into lines (the header, REPLAYED / LIVE step lines, streamed text, what
// happened to the working tree), asks the questions a person answers (approval, drift), turns
// Ctrl-C into an abort, and prints how the run ended. It returns the process exit code.
import { createInterface } from 'node:readline/promises';
import type { Writable } from 'node:stream';
import { describeChanges, UsageError } from '../errors/index.js';
import type { RunOutcome, SessionEvent, SessionOptions } from '../session/index.js';
import { createApprover } from './approval.js';
import { LIMIT_EXIT_CODE, type DriveFlags } from './options.js';
import type { LimitReached } from '../agent/budget.js';
import { StepPrinter } from './step-printer.js';
import { styleFor, type Style } from './style.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

/** Runs `drive` (a session entry point) with the terminal's printer, prompts and Ctrl-C; returns the exit code. */
export async function runOnTerminal(drive: (options: SessionOptions) => Promise<RunOutcome>, flags: DriveFlags, out: Out = process.stdout): Promise<number> {
  if (flags.restore && flags.keepWorktree) throw new UsageError('Choose one of --restore and --keep-worktree, not both.');
  const env = process.env;
  const interactive = Boolean(process.stdin.isTTY);
  const style = styleFor(out, env);
  const printer = new StepPrinter(out, style);
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    out.write(style.red('\n  Stopping: the step in progress is left unrecorded; every finished step is kept.\n'));
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const outcome = await drive({
      model: flags.model,
      maxSteps: flags.maxSteps,
      maxTurns: flags.maxTurns,
      maxCost: flags.maxCost,
      maxTokens: flags.maxTokens,
      // commander's --no-compact leaves `compact` true when it is not given: only false is a choice.
      ...(flags.compact === false ? { compact: false } : {}),
      compactAt: flags.compactAt,
      contextWindow: flags.contextWindow,
      thinking: flags.thinking,
      inFlight: flags.inFlight,
      worktree: flags.restore ? 'restore' : flags.keepWorktree ? 'keep' : undefined,
      push: flags.push,
      env,
      signal: controller.signal,
      approve: createApprover({ yes: Boolean(flags.yes), interactive }),
      onDrift: interactive ? (question) => askAboutDrift(question, out, style) : undefined,
      onEvent: (event) => printEvent(event, printer, out, style),
    });
    const saved = printer.summary();
    if (outcome.status === 'interrupted') {
      out.write('Stopped. Run the same command again to continue: finished steps replay, and the interrupted one is handled as in flight.\n');
      return 130;
    }
    if (outcome.limit) {
      out.write(`\n${style.yellow(limitMessage(outcome.limit))}\n`);
      if (saved) out.write(`${saved}\n`);
      return LIMIT_EXIT_CODE;
    }
    out.write(`\n${style.bold('Final answer')}\n${outcome.final || '(the model gave no text)'}\n`);
    if (saved) out.write(`\n${style.green(saved)}\n`);
    return 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

// One session event as the person at the terminal reads it.
function printEvent(event: SessionEvent, printer: StepPrinter, out: Out, style: Style): void {
  switch (event.type) {
    case 'opened': {
      const n = event.recordedSteps;
      out.write(`${style.bold('savepoint')}  run ${style.cyan(event.run)}  ${style.dim('·')}  model ${event.model}\n`);
      if (event.instructions) out.write(style.dim(`  Project instructions: ${event.instructions}, pinned into this run's system prompt (edits to it reach new runs, not this one).\n`));
      if (event.openedAs === 'finished') out.write(style.dim(`  This run finished before: replaying its ${n} steps from the journal.\n`));
      else if (event.openedAs === 'continuing') out.write(style.dim(`  Continuing: ${n} finished step${n === 1 ? '' : 's'} replay first, then the model answers the follow-up.\n`));
      else if (n > 0) out.write(style.dim(`  Resuming: ${n} finished step${n === 1 ? '' : 's'} in the journal replay first, then it goes live.\n`));
      return;
    }
    case 'text':
      return printer.onText(event.text);
    case 'thinking':
      return printer.onThinking(event.text);
    case 'worktree-restored': {
      const why = { flag: '--restore', 'clean-base': "This is a clean checkout of the run's base commit", chosen: 'You chose restore' }[event.reason];
      out.write(style.dim(`  ${why}: restored the working tree as the journal recorded it ${where(event.step)} (${event.written.length} written, ${event.deleted.length} deleted).\n`));
      if (event.kept.length) out.write(style.dim(`  Kept ${event.kept.length} untracked file(s) the run never recorded: ${event.kept.slice(0, 5).join(', ')}${event.kept.length > 5 ? ', ...' : ''}\n`));
      return;
    }
    case 'worktree-kept': {
      const listed = describeChanges(event.changes);
      if (event.reason === 'flag') out.write(style.yellow(`  --keep-worktree: going on with files that differ from the journal (${listed}).\n`));
      else if (event.reason === 'in-flight') out.write(style.yellow(`  The step in flight at the crash may have changed files: ${listed}. Kept as they are (--restore puts back the checkpoint).\n`));
      return;
    }
    default:
      return printer.onEvent(event);
  }
}

// What stopped the run, and how to go on.
function limitMessage({ limit, value, reached }: LimitReached): string {
  const how = `Every finished step is kept: run the same command with a higher --${limit} (or without it) to go on from here.`;
  if (limit === 'max-cost') return `Stopped at the --max-cost limit of $${value}: the run's model calls have cost an estimated $${reached.toFixed(2)}. ${how}`;
  const what = limit === 'max-steps' ? 'steps' : 'model calls';
  return `Stopped at the --${limit} limit of ${value} ${what} (the run has taken ${reached}). ${how}`;
}

function where(step: number): string {
  return step ? `after step ${step}` : 'when the run started';
}

// The drift question on a terminal: restore, keep, or quit.
async function askAboutDrift(question: { step: number; changes: Parameters<typeof describeChanges>[0] }, out: Out, style: Style): Promise<'restore' | 'keep' | 'stop'> {
  out.write(style.yellow(`  The working tree differs from what the run recorded ${where(question.step)}: ${describeChanges(question.changes)}.\n`));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question('  Restore the files as the run recorded them? [y]es, restore / [k]eep them as they are / [q]uit: ')).trim().toLowerCase();
    if (answer.startsWith('y') || answer.startsWith('r')) return 'restore';
    return answer.startsWith('k') ? 'keep' : 'stop';
  } finally {
    rl.close();
  }
}
