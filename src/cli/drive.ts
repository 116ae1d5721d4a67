// Driving one run from the command line, shared by `run` and `resume`: open the run's journal,
// check the working tree against the last checkpoint, print every step as it happens, run the agent
// through the journal (checkpointing files after each step that may change them), and say what
// replay saved.
import { createInterface } from 'node:readline/promises';
import type { Writable } from 'node:stream';
import { runAgent } from '../agent/loop.js';
import type { InFlightPolicy } from '../agent/in-flight.js';
import type { History } from '../durable/history.js';
import { openJournal, type RunJournal } from '../durable/run-journal.js';
import { MissingCredentialsError } from '../errors/index.js';
import { ObjectStore } from '../journal/objects.js';
import { createJournalPusher } from '../journal/push.js';
import type { RunSandbox } from '../journal/entry.js';
import { findRepository } from '../journal/repository.js';
import { createProvider, hasAnthropicCredentials, SCRIPT_PREFIX } from '../model/index.js';
import type { ModelProvider } from '../model/types.js';
import { openRunSecrets } from '../redact/run-secrets.js';
import { createTools } from '../tools/index.js';
import { describeChanges, DriftError, findDrift, type Drift } from '../worktree/drift.js';
import { restoreWorktree, type RevealText } from '../worktree/restore.js';
import { WorktreeSnapshotter } from '../worktree/snapshot.js';
import { createApprover } from './approval.js';
import { chooseSandbox, type SandboxFlags } from './sandbox-choice.js';
import { StepPrinter } from './step-printer.js';
import { styleFor, type Style } from './style.js';

export interface DriveOptions {
  // The repository root the agent works in.
  root: string;
  run: string;
  task: string;
  model: string;
  yes: boolean;
  maxSteps?: number;
  inFlight: InFlightPolicy;
  // What to do when the working tree differs from the last checkpoint (else: ask, or stop).
  restore?: boolean;
  keepWorktree?: boolean;
  // Push agent-journal to this remote after every step.
  push?: string;
  out?: Writable & { isTTY?: boolean; columns?: number };
  interactive?: boolean;
  env?: NodeJS.ProcessEnv;
  // How run_bash runs commands (default: in bubblewrap, nothing more allowed).
  sandbox?: SandboxFlags;
}

// Runs (or resumes, or replays) one run to its end; returns the process exit code.
export async function driveRun(options: DriveOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const env = options.env ?? process.env;
  const interactive = options.interactive ?? Boolean(process.stdin.isTTY);
  const style = styleFor(out, env);
  const printer = new StepPrinter(out, style);
  const repo = findRepository(options.root);
  const { redactor, revealer } = openRunSecrets(repo.commonDir, env);
  let sandbox: RunSandbox = { kind: 'none', network: true, gitWrites: true }; // chosen below, before anything runs live
  const snapshotter = new WorktreeSnapshotter(repo, new ObjectStore(repo.commonDir), { redactText: redactor.text });
  const journal: RunJournal = await openJournal({
    dir: options.root,
    run: options.run,
    task: options.task,
    model: options.model,
    onEvent: printer.onEvent,
    redact: redactor.value,
    sandbox: () => sandbox,
    startCheckpoint: () => snapshotter.snapshot().tree,
    store: options.push ? { afterAppend: createJournalPusher(() => journal.store, options.push, options.run) } : undefined,
  });
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
    // A finished run replays with no key; anything else needs one before a line is printed.
    const scripted = options.model.startsWith(SCRIPT_PREFIX);
    if (record?.status !== 'finished' && !scripted && !hasAnthropicCredentials(env)) throw new MissingCredentialsError(options.model);
    out.write(`${style.bold('savepoint')}  run ${style.cyan(options.run)}  ${style.dim('·')}  model ${options.model}\n`);
    if (record?.status === 'finished') out.write(style.dim(`  This run finished before: replaying its ${recorded} steps from the journal.\n`));
    else if (recorded > 0) out.write(style.dim(`  Resuming: ${recorded} finished step${recorded === 1 ? '' : 's'} in the journal replay first, then it goes live.\n`));
    if (record && record.status !== 'finished') {
      const last = lastCheckpoint(journal.history) ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
      const drift = last && (await findDrift(snapshotter.objects, snapshotter, last.tree, last.step, record.baseCommit));
      if (drift) await resolveDrift(drift, { ...options, interactive, out, style, snapshotter, reveal: revealer.partial, inFlight: lastIsInFlight(journal.history) });
    }
    if (record?.status !== 'finished') sandbox = await chooseSandbox(options.root, options.sandbox ?? { use: true, network: false, gitWrites: false }, { interactive, out, style });

    let provider: Promise<ModelProvider> | undefined;
    const outcome = await runAgent({
      journal,
      task: options.task,
      model: options.model,
      provider: () => (provider ??= createProvider(options.model)),
      tools: createTools(options.root, { sandbox }),
      revealSecrets: revealer.value,
      maxSteps: options.maxSteps,
      inFlight: options.inFlight,
      approve: createApprover({ yes: options.yes, interactive }),
      onText: printer.onText,
      signal: controller.signal,
      checkpoint: () => {
        const snapshot = snapshotter.snapshot();
        return { tree: snapshot.tree, skipped: snapshot.skipped };
      },
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
      out.write('Stopped. Run the same command again to continue: finished steps replay, and the interrupted one is handled as in flight.\n');
      return 130;
    }
    // A drift refusal is not a failure of the run: nothing ran, and the journal must stay exactly
    // as it was (the run is still unfinished, waiting for --restore or --keep-worktree), so
    // `savepoint runs` does not report it failed and no commit lands for a question.
    if (!(error instanceof DriftError)) await journal.finish('failed', { error: (error as Error).message }).catch(() => {});
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    journal.close();
  }
}

// The most recent checkpoint in a run's history, and the step that recorded it.
function lastCheckpoint(history: History): { tree: string; step: number } | undefined {
  const entries = history.entries();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.checkpoint) return { tree: entry.checkpoint, step: entry.step };
  }
  return undefined;
}

// The last step was started and never recorded: a crash mid-step.
function lastIsInFlight(history: History): boolean {
  const last = history.entries().at(-1);
  return last?.phase === 'intent';
}

interface DriftContext {
  run: string;
  root: string;
  restore?: boolean;
  keepWorktree?: boolean;
  interactive: boolean;
  inFlight: boolean;
  out: Writable;
  style: Style;
  snapshotter: WorktreeSnapshotter;
  reveal: RevealText;
}

// Restores, keeps, asks or stops, as SPEC's drift rules say.
async function resolveDrift(drift: Drift, context: DriftContext): Promise<void> {
  const { out, style } = context;
  const where = drift.step ? `after step ${drift.step}` : 'when the run started';
  const restore = async (why: string) => {
    const result = await restoreWorktree(context.root, context.snapshotter.objects, drift.checkpoint, drift.current, context.snapshotter.trackedPaths(), context.reveal);
    out.write(style.dim(`  ${why}: restored the working tree as the journal recorded it ${where} (${result.written.length} written, ${result.deleted.length} deleted).\n`));
    if (result.unrevealed.length) out.write(style.yellow(`  ${result.unrevealed.length} restored file(s) keep secret placeholders this machine has no value for: ${result.unrevealed.slice(0, 5).join(', ')}\n`));
    if (result.kept.length) out.write(style.dim(`  Kept ${result.kept.length} untracked file(s) the run never recorded: ${result.kept.slice(0, 5).join(', ')}${result.kept.length > 5 ? ', ...' : ''}\n`));
  };
  if (context.restore) return restore('--restore');
  if (drift.cleanBase) return restore("This is a clean checkout of the run's base commit");
  const listed = describeChanges(drift.changes);
  if (context.keepWorktree) {
    out.write(style.yellow(`  --keep-worktree: going on with files that differ from the journal (${listed}).\n`));
    return;
  }
  if (context.inFlight) {
    out.write(style.yellow(`  The step in flight at the crash may have changed files: ${listed}. Kept as they are (--restore puts back the checkpoint).\n`));
    return;
  }
  if (!context.interactive) throw new DriftError(context.run, drift.step, drift.changes);
  out.write(style.yellow(`  The working tree differs from what the run recorded ${where}: ${listed}.\n`));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question('  Restore the files as the run recorded them? [y]es, restore / [k]eep them as they are / [q]uit: ')).trim().toLowerCase();
    if (answer.startsWith('y') || answer.startsWith('r')) return restore('You chose restore');
    if (answer.startsWith('k')) return;
    throw new DriftError(context.run, drift.step, drift.changes);
  } finally {
    rl.close();
  }
}
