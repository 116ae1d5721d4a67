// `savepoint show <run> <step>`: one step in full: what it was asked, its whole result, its
// timings and token usage, how its result came about, and the code diff it made (its working-tree
// checkpoint against the one before it), coloured on a terminal.
// Tested in test/cli/reading/reading.test.ts.
import { Command } from 'commander';
import { NoSuchStepError, UsageError } from '../../errors/index.js';
import { formatBytes, formatCount, formatDuration, formatUsd } from '../../format/numbers.js';
import { showControls, showControlsIn, terminalJson } from '../../format/text.js';
import type { JournalEntry, RunConfig } from '../../journal/entry.js';
import { loadWholeRun, openJournals } from '../../report/journal-runs.js';
import { formatInput, formatResult } from '../../report/step-detail.js';
import type { StepView, Timeline } from '../../report/summarize.js';
import { whereNote } from '../view/run-format.js';
import { writePaged } from '../terminal/pager.js';
import { paintDiff, stepDiff, type StepDiff } from '../view/step-diff.js';
import { styleFor, type Style } from '../terminal/style.js';
import { estimateCost, priceFor } from '../../model/pricing.js';

// Where a step is printed: the terminal's text, collected for the pager.
type Out = { write(text: string): unknown };

/** What `show --json` prints. */
export interface ShownStep {
  run: string;
  step: StepView;
  intent: JournalEntry | null;
  result: JournalEntry | null;
  diff: { from: string; fromLabel: string; to: string; text: string; error: string | null } | null;
}

/** The `show` command. */
export function showCommand(): Command {
  return new Command('show')
    .summary('one step in full, with the code diff it made')
    .description(
      'Show one step of a run in full: its input, its whole result, timings, token usage, how its result came about, and the diff of the files it changed.',
    )
    .argument('<run>', 'the run id (see "savepoint runs")')
    .argument(
      '<step>',
      'the step number (see "savepoint log <run>"), or "config" for what the run was told: its pinned system prompt, tools and settings',
    )
    .option('--json', 'print the step as JSON (see docs/json-events.md)')
    .action(async (id: string, stepText: string, flags: { json?: boolean }) => {
      const step = stepText === 'config' ? 0 : parseStep(stepText);
      const journals = await openJournals(process.cwd());
      const run = await loadWholeRun(journals, id);
      if (step === 0) {
        const config = run.record?.config ?? null;
        if (flags.json) process.stdout.write(`${terminalJson({ run: run.id, config }, 2)}\n`);
        else printConfig(run.id, config, process.stdout, styleFor(process.stdout));
        return;
      }
      const view = run.timeline.steps.find((s) => s.step === step);
      if (!view) throw new NoSuchStepError(run.id, step, run.timeline.steps.at(-1)?.step ?? 0);
      const style = styleFor(process.stdout);
      const diff = await stepDiff(journals.repo.root, run.timeline, step, { stat: !flags.json });
      const intent = run.entries.find((e) => e.step === step && e.phase === 'intent') ?? null;
      const result = run.entries.find((e) => e.step === step && e.phase === 'result') ?? null;
      if (flags.json) {
        const shown: ShownStep = { run: run.id, step: view, intent, result, diff: diff ?? null };
        process.stdout.write(`${terminalJson(shown, 2)}\n`);
      } else {
        const text: string[] = [];
        printStep(run.timeline, view, intent, result, diff, { write: (chunk: string) => text.push(chunk) }, style);
        await writePaged(text.join(''));
      }
    });
}

function parseStep(text: string): number {
  const n = Number(text.replace(/^#/, ''));
  if (!/^#?\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `"${text}" is not a step number: give a whole number from 1 up, as "savepoint log <run>" numbers them (e.g. "savepoint show <run> 4").`,
    );
  }
  return n;
}

const RESOLUTIONS: Record<string, string> = {
  'in-flight-reported':
    'the step was started before a crash and never recorded; it was not run again, and the model was told its outcome is unknown',
  declined: 'the step did not run: approval declined it (or it was answered without running), and that answer was recorded',
  // Journals written before the resolution was named "declined".
  gated: 'the step did not run: approval declined it (or it was answered without running), and that answer was recorded',
};

/** The human view of one step. */
export function printStep(
  timeline: Timeline,
  view: StepView,
  intentEntry: JournalEntry | null,
  resultEntry: JournalEntry | null,
  rawDiff: StepDiff | undefined,
  out: Out,
  style: Style,
): void {
  // Every field of a step, and the diff of its files, came from a journal (perhaps a fetched one):
  // control characters are made visible before anything is cut or coloured, and the diff is
  // coloured here rather than by git, so no escape in a file's content reaches the terminal.
  const [t, s, intent, result] = [showControlsIn(timeline), showControlsIn(view), showControlsIn(intentEntry), showControlsIn(resultEntry)];
  const diff = rawDiff && { ...rawDiff, text: paintDiff(showControls(rawDiff.text), style) };
  const heading = (text: string) => out.write(`\n${style.bold(style.cyan(text))}\n`);
  const field = (name: string, value: string) => out.write(`  ${style.dim(name.padEnd(11))} ${value}\n`);
  out.write(`${style.bold(`#${s.step} ${s.description}`)}  ${style.dim(`· ${s.kind} · run ${t.run.id}`)}\n`);
  const where = whereNote(t.run);
  if (where) out.write(`${style.dim(`↳ ${where}`)}\n`);

  heading('When');
  field(
    'attempt',
    `${s.attempt === 0 ? `0 (copied from ${t.run.lineage?.forkedFrom ?? 'the parent run'} when this run was forked)` : s.attempt}${s.startedInAttempt !== null ? ` (started in attempt ${s.startedInAttempt}, which stopped before recording a result)` : ''}`,
  );
  field('started', s.startedAt);
  if (s.finishedAt) field('finished', s.finishedAt);
  field('took', s.durationMs === null ? '– (never finished)' : formatDuration(s.durationMs));
  if (s.replayedBy.length)
    field(
      'replayed',
      `by attempt${s.replayedBy.length === 1 ? '' : 's'} ${s.replayedBy.join(', ')}: handed back from the journal, not run again`,
    );
  if (s.state === 'in-flight')
    field('state', style.red('in flight: its intent was recorded, then the process stopped before a result was'));
  if (s.resolution) field('resolution', `${s.resolution}${RESOLUTIONS[s.resolution] ? style.dim(` — ${RESOLUTIONS[s.resolution]}`) : ''}`);
  if (s.usage) {
    const u = s.usage;
    const cache =
      u.cacheRead || u.cacheCreation ? ` · ${formatCount(u.cacheRead)} cache reads, ${formatCount(u.cacheCreation)} cache writes` : '';
    const price = priceFor(s.model ?? undefined);
    const cost = price.family === 'scripted' ? 'scripted model: no cost' : `${formatUsd(estimateCost(price, u))} estimated`;
    field('usage', `${formatCount(u.input)} tokens in, ${formatCount(u.output)} out${cache} (${cost})`);
  }
  if (s.model) field('model', s.model);

  heading('Input');
  out.write(`${indent(formatInput((result ?? intent)?.input))}\n`);

  heading(s.isError ? 'Result (an error, as the model was told)' : 'Result');
  if (result) {
    if (result.summary) field('summary', result.summary);
    // An image the step read: what it is and the blob its bytes are kept in, never the bytes.
    const image = (result.result as { image?: { mediaType?: unknown; bytes?: unknown; blob?: unknown } } | null)?.image;
    if (image && typeof image.blob === 'string')
      field(
        'image',
        `${String(image.mediaType)}, ${formatBytes(Number(image.bytes))}, kept as blob ${image.blob} (runs/${t.run.id}/blobs/ on the journal branch)`,
      );
    out.write(`${indent(formatResult(result))}\n`);
  } else {
    out.write(`  ${style.dim('No result was recorded: the step was in flight when its process stopped.')}\n`);
  }

  heading('Files');
  out.write(`${filesSection(t, diff, style)}\n`);
  const skipped = result?.checkpointSkipped ?? [];
  if (skipped.length)
    out.write(`  ${style.yellow(`Left out of the checkpoint: ${skipped.map((f) => `${f.path} (${f.reason})`).join(', ')}`)}\n`);
}

// What a run was told and given: its pinned configuration (run.json's `config`).
function printConfig(id: string, recorded: RunConfig | null, out: Out, style: Style): void {
  const config = showControlsIn(recorded);
  if (!config) {
    out.write(`Run ${id} was recorded before run.json pinned its configuration: it uses this build's system prompt, tools and settings.\n`);
    return;
  }
  const field = (name: string, value: string) => out.write(`  ${style.dim(name.padEnd(14))} ${value}\n`);
  out.write(`${style.bold(`Run ${id}: its pinned configuration`)} ${style.dim('(run.json, recorded when the run was created)')}\n\n`);
  field('model', config.model);
  field('max tokens', formatCount(config.maxTokens));
  const c = config.compaction;
  field('compaction', c.enabled ? `at ${Math.round(c.at * 100)}% of a ${formatCount(c.contextWindow)}-token context window` : 'off');
  field('thinking', config.thinking ? `${formatCount(config.thinking.budgetTokens)} tokens` : 'off');
  field(
    'instructions',
    config.instructions
      ? `${config.instructions.file} (${formatCount(config.instructions.chars)} characters), in the system prompt`
      : 'none (no AGENTS.md or CLAUDE.md when the run was created)',
  );
  field('tools', config.tools.map((t) => t.name).join(', '));
  out.write(`\n${style.bold(style.cyan('System prompt'))}\n${indent(config.system)}\n`);
}

// The step's diff, or why there is none.
function filesSection(t: Timeline, diff: StepDiff | undefined, style: Style): string {
  if (diff?.error) return `  ${style.yellow(diff.error)}`;
  if (diff && diff.text.trim())
    return `  ${style.dim(`checkpoint ${diff.to.slice(0, 10)} against ${diff.fromLabel}`)}\n${diff.text.replace(/\n+$/, '')}`;
  if (diff) return `  This step changed no files ${style.dim(`(its checkpoint ${diff.to.slice(0, 10)} equals ${diff.fromLabel})`)}.`;
  if (t.steps.some((x) => x.checkpoint)) return '  This step changed no files (it has no working-tree checkpoint).';
  return '  This step changed no files, or was not checkpointed: the run records no working-tree checkpoints.';
}

function indent(text: string): string {
  return text
    .replace(/\n+$/, '')
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
