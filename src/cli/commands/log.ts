// `savepoint log [run]`: a run's steps as a timeline, one line per step, with a mark where each
// attempt replayed from the journal and where it went live, the run's totals, and what resuming
// saved. `--json` for scripts, `--html <file>` for a page to look at.
// Tested in test/cli/reading/reading.test.ts.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { Command } from 'commander';
import { ReportWriteError } from '../../errors/index.js';
import { compactCount, formatCount, formatDuration, formatUsd, plural } from '../../format/numbers.js';
import { displayWidth, fitColumns, showControls, showControlsIn, terminalJson, wrapWords } from '../../format/text.js';
import { relativeTime } from '../../format/time.js';
import { attemptEndingText } from '../../report/attempt-ending.js';
import { loadRun, openJournals } from '../../report/journal-runs.js';
import { isPricedRun, type AttemptView, type StepView, type Timeline } from '../../report/summarize.js';
import { paintStatus, padVisible, whereNote } from '../view/run-format.js';
import { styleFor, type Style } from '../terminal/style.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

/** The `log` command. */
export function logCommand(): Command {
  return new Command('log')
    .summary("a run's steps as a timeline (default: the most recent run)")
    .description(
      'Show a run as a timeline: one line per step (number, kind, what it did, its result, how long it took), ' +
        'a mark where each attempt replayed from the journal and where it went live, the totals, and what ' +
        'resuming saved (model calls, tokens, an estimated cost, seconds).',
    )
    .argument('[run]', 'the run id (see "savepoint runs"; default: the most recently active run)')
    .option('--json', 'print the timeline as JSON (see docs/json-events.md)')
    .option('--html <file>', 'also write the timeline as one self-contained HTML page')
    .action(async (id: string | undefined, flags: { json?: boolean; html?: string }) => {
      const journals = await openJournals(process.cwd());
      const run = await loadRun(journals, id);
      if (flags.html) {
        const path = resolve(flags.html);
        // Loaded only for the page: the plain timeline needs neither the page's code nor its assets.
        const [{ renderHtmlTimeline }, { allStepDiffs }] = await Promise.all([
          import('../../report/html-timeline.js'),
          import('../view/step-diff.js'),
        ]);
        // Each task step's subagent, shown inside it.
        const subagents = new Map<number, Timeline>();
        for (const step of run.timeline.steps) {
          const loaded = step.subagent ? await loadRun(journals, step.subagent.run).catch(() => undefined) : undefined;
          if (loaded) subagents.set(step.step, loaded.timeline);
        }
        const html = renderHtmlTimeline({
          timeline: run.timeline,
          entries: run.entries,
          diffs: await allStepDiffs(journals.repo.root, run.timeline),
          generatedAt: new Date(),
          subagents,
        });
        try {
          writeFileSync(path, html);
        } catch (error) {
          throw new ReportWriteError(path, (error as Error).message);
        }
        if (!flags.json) process.stdout.write(`Wrote the timeline of ${run.id} to ${path} (open it in a browser).\n`);
        if (!flags.json) return;
      }
      // `config`: what the run was told and given (its pinned system prompt, tools, settings), or null for an older run.
      if (flags.json) process.stdout.write(`${terminalJson({ ...run.timeline, config: run.record?.config ?? null }, 2)}\n`);
      else printTimeline(run.timeline, process.stdout, styleFor(process.stdout), Date.now(), run.problem);
    });
}

// The lines under a task step: its subagent's run and its final answer (the first lines of it).
function subagentLines(subagent: NonNullable<StepView['subagent']>, indent: number, style: Style): string {
  const pad = ' '.repeat(indent);
  const width = Math.max(20, style.width - indent - 2);
  const lines = [`${pad}${style.dim(`↳ subagent run ${fitColumns(subagent.run, width - 18)}`)}`];
  if (subagent.answer !== null) {
    const answer = wrapWords(subagent.answer.trim(), width, 'columns');
    lines.push(...answer.slice(0, SUBAGENT_ANSWER_LINES).map((line) => `${pad}${style.cyan('▌')} ${line}`));
    if (answer.length > SUBAGENT_ANSWER_LINES)
      lines.push(
        `${pad}${style.dim(`  ... ${answer.length - SUBAGENT_ANSWER_LINES} more lines ("savepoint show <run> <step>" has all of it)`)}`,
      );
  } else lines.push(`${pad}${style.dim('  no answer recorded yet: resuming this run goes on with it')}`);
  return `${lines.join('\n')}\n`;
}

// How much of a subagent's answer the timeline shows under its task step.
const SUBAGENT_ANSWER_LINES = 6;

/** The human timeline. */
export function printTimeline(recorded: Timeline, target: Out, style: Style, now: number, recordedProblem: string | null = null): void {
  const out = new Chunked(target);
  // Everything in a timeline came from a journal, perhaps a fetched one: shown, never obeyed.
  const t = showControlsIn(recorded);
  const problem = recordedProblem === null ? null : showControls(recordedProblem);
  const r = t.run;
  const status = problem ? 'corrupt' : r.status;
  const activity = `last activity ${relativeTime(r.lastActivity, now)}`;
  const modelRoom = style.width - (4 + r.id.length + 2 + status.length + 5 + 5 + activity.length);
  const model = modelRoom >= 8 ? `  ${style.dim('·')}  ${fitColumns(r.model ?? 'model unknown', modelRoom)}` : '';
  // On a narrow screen the last activity gets a line of its own.
  const fits = 4 + displayWidth(r.id) + 2 + status.length + 5 + activity.length <= style.width;
  out.write(
    `${style.bold('run')} ${style.cyan(r.id)}  ${paintStatus(status, style)}${model}${fits ? `  ${style.dim('·')}  ${activity}` : `\n${style.dim(fitColumns(activity, style.width))}`}\n`,
  );
  out.write(`${style.dim('task')} ${fitColumns(r.task, style.width - 5)}\n`);
  const where = whereNote(r);
  if (where) out.write(`${style.dim(`↳ ${fitColumns(where, style.width - 2)}`)}\n`);
  if (r.parent)
    out.write(
      `${style.dim(`↳ ${fitColumns(`subagent "${r.parent.description}" of run ${r.parent.run}, started by its task call at #${r.parent.step} ("savepoint log ${r.parent.run}")`, style.width - 2)}`)}\n`,
    );
  if (problem) out.write(`${style.red(problem)}\n`);
  out.write('\n');
  if (t.steps.length === 0) out.write(style.dim('  No steps recorded yet.\n'));

  const layout = columns(t, style);
  const maxMs = Math.max(1, ...t.steps.map((s) => s.durationMs ?? 0));
  const marks = new Map<number, AttemptView[]>();
  for (const a of t.attempts) marks.set(a.firstLiveStep, [...(marks.get(a.firstLiveStep) ?? []), a]);
  const firstMark = Math.min(...t.attempts.map((a) => a.firstLiveStep));
  if (t.steps.length && t.steps[0]!.step < firstMark) {
    out.write(
      rule(
        r.lineage ? `steps #1–#${firstMark - 1} come from ${r.lineage.forkedFrom}` : 'recorded before the first attempt noted in run.json',
        style,
      ),
    );
  }
  for (const s of t.steps) {
    for (const a of marks.get(s.step) ?? []) out.write(rule(attemptMark(a), style));
    out.write(stepLine(s, layout, maxMs, style));
    // A user turn: the follow-up instruction in full, under its step.
    if (s.message !== null)
      for (const line of wrapWords(s.message, style.width - 10, 'columns'))
        out.write(`${' '.repeat(layout.num + 4)}${style.cyan('▌')} ${line}\n`);
    // A task step: where its subagent ran, and its answer (its own steps: log of that run).
    if (s.subagent) out.write(subagentLines(s.subagent, layout.num + 4, style));
  }
  const tail = t.attempts.filter((a) => !t.steps.some((s) => s.step >= a.firstLiveStep));
  for (const a of tail) out.write(rule(attemptMark(a), style));

  out.write('\n');
  const tot = t.totals;
  // A labelled paragraph, wrapped to the terminal under a 14-column label.
  const para = (label: string, text: string, paint: (line: string) => string = (l) => l) => {
    const lines = wrapWords(text, style.width - 14, 'columns');
    out.write(lines.map((line, i) => `${i === 0 ? style.bold(label.padEnd(14)) : ' '.repeat(14)}${paint(line)}`).join('\n') + '\n');
  };
  const priced = isPricedRun(t.steps);
  para(
    'Totals',
    `${plural(tot.steps, 'step')} · ${plural(tot.modelCalls, 'model call')} · ${formatCount(tot.tokens.input)} tokens in, ${formatCount(tot.tokens.output)} out` +
      `${cacheNote(tot.tokens)} (${priced ? formatUsd(tot.estimatedCostUsd) : 'scripted model: no cost'}) · ${plural(tot.commands, 'command')} · ` +
      `${formatDuration(tot.workMs)} of step time, ${formatDuration(tot.wallMs)} first to last`,
  );
  const saved = t.saved;
  if (saved.replayedSteps > 0) {
    // Only what was saved: no "0 commands", and no cost for a scripted model.
    const tokens = saved.tokens.input + saved.tokens.output;
    const parts = [
      saved.modelCalls ? plural(saved.modelCalls, 'model call') : '',
      tokens ? `${formatCount(tokens)} tokens (${formatCount(saved.tokens.input)} in, ${formatCount(saved.tokens.output)} out)` : '',
      priced && saved.estimatedCostUsd ? formatUsd(saved.estimatedCostUsd) : '',
      saved.commands ? plural(saved.commands, 'command') : '',
      formatDuration(saved.originalMs),
    ].filter(Boolean);
    const listed = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0]!;
    para(
      'Resumes saved',
      `${listed}: ${plural(saved.replayedSteps, 'step')} handed back from the journal instead of run again`,
      style.green,
    );
    if (priced && saved.estimatedCostUsd) para('', '(cost is an estimate from list prices per model; see docs/cli.md)', style.dim);
  } else if (r.resumes === 0) {
    para('Resumes saved', 'nothing yet: the run was never resumed', style.dim);
  }
  if (t.final) para('Final answer', t.final.trim());
  if (t.error) para('Error', t.error, style.red);
  out.write(
    style.dim(
      `\n${wrapWords(`"savepoint show ${r.id} <step>" shows a step in full, with its diff.`, style.width, 'columns').join('\n')}\n`,
    ),
  );
  out.flush();
}

// Output gathered into writes of about CHUNK_CHARS: a line a write was a system call per line on
// a file or a pipe (thousands for a long run), where a reader of the pipe still gets it as it comes.
const CHUNK_CHARS = 64 * 1024;

class Chunked {
  private parts: string[] = [];
  private size = 0;
  constructor(private readonly out: Out) {}

  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= CHUNK_CHARS) this.flush();
  }

  flush(): void {
    if (this.parts.length) this.out.write(this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }
}

interface Layout {
  num: number;
  kind: number;
  what: number;
  result: number;
  bar: number;
}

function columns(t: Timeline, style: Style): Layout {
  const num = Math.max(3, ...t.steps.map((s) => `#${s.step}`.length));
  const kind = Math.min(12, Math.max(4, ...t.steps.map((s) => s.kind.length)));
  const bar = style.width >= 100 ? 10 : 0;
  // 2 indent, gaps, the arrow, 9 for the duration
  const room = style.width - (2 + num + 2 + kind + 2 + 2 + 2 + 2 + 9 + (bar ? bar + 2 : 0));
  const what = Math.max(12, Math.min(40, Math.floor(room * 0.45)));
  return { num, kind, what, result: Math.max(8, room - what), bar };
}

// Whether a summary already names how the step was resolved (a declined or denied step's does).
function saysResolution(summary: string, resolution: string): boolean {
  if (resolution === 'declined' || resolution === 'gated') return /^(declined|denied)\b/.test(summary);
  return summary.includes(resolution);
}

function stepLine(s: StepView, l: Layout, maxMs: number, style: Style): string {
  const inFlight = s.state === 'in-flight';
  let result = inFlight ? 'in flight: started, never recorded' : (s.summary ?? '');
  if (s.resolution === 'in-flight-reported' && !/crash/.test(result)) result += ' (was in flight at a crash)';
  // A declined step's summary says so itself ("declined: use pnpm", "denied by rule …"): said once.
  else if (s.resolution && s.resolution !== 'in-flight-reported' && !saysResolution(result, s.resolution)) result += ` (${s.resolution})`;
  const resultText = fitColumns(result, l.result);
  const painted = inFlight || s.isError || s.resolution === 'in-flight-reported' ? style.red(resultText) : resultText;
  const duration = s.durationMs === null ? '–' : formatDuration(s.durationMs);
  const barWidth = s.durationMs ? Math.max(1, Math.round((s.durationMs / maxMs) * l.bar)) : 0;
  const bar = l.bar ? `  ${style.dim('▇'.repeat(barWidth).padEnd(l.bar))}` : '';
  return (
    `  ${`#${s.step}`.padStart(l.num)}  ${style.dim(padVisible(fitColumns(s.kind, l.kind), l.kind))}  ${style.bold(padVisible(fitColumns(s.description, l.what), l.what))}  ` +
    `${style.dim('→')} ${padVisible(painted, l.result)}  ${duration.padStart(9)}${bar}`.trimEnd() +
    '\n'
  );
}

// `attempt 2 · replayed #1–#6, live from #7 · 16:55:16 UTC on vm (pid 12049)`: what matters first,
// so that a narrow terminal cuts the least useful part.
function attemptMark(a: AttemptView): string {
  const when = a.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const what = a.firstLiveStep > 1 ? `replayed #1–#${a.firstLiveStep - 1}, live from #${a.firstLiveStep}` : `live from #${a.firstLiveStep}`;
  const parts = [`attempt ${a.number}`, what];
  parts.push(attemptEndingText(a));
  parts.push(`${when} on ${a.host} (pid ${a.pid})`);
  return parts.join(' · ');
}

function rule(text: string, style: Style): string {
  const head = `── ${fitColumns(text, style.width - 8)} `;
  return `${style.cyan(head + '─'.repeat(Math.max(2, style.width - displayWidth(head))))}\n`;
}

function cacheNote(tokens: Timeline['totals']['tokens']): string {
  const parts = [];
  if (tokens.cacheRead) parts.push(`${compactCount(tokens.cacheRead)} cache reads`);
  if (tokens.cacheCreation) parts.push(`${compactCount(tokens.cacheCreation)} cache writes`);
  return parts.length ? `, ${parts.join(', ')}` : '';
}
