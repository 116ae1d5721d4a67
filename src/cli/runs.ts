// `savepoint runs`: every run in the local journal and in the remote-tracking ones, most recently
// active first: id, status, steps, model calls, tokens, resumes, last activity and task.
import type { Writable } from 'node:stream';
import { Command } from 'commander';
import { listRunSummaries, openJournals, type RunRow } from '../report/journal-runs.js';
import { relativeTime, type RunSummary } from '../report/summarize.js';
import { compactCount, paintStatus, padVisible, whereNote } from './run-format.js';
import { fit, styleFor, type Style } from './style.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

// The `runs` command.
export function runsCommand(): Command {
  return new Command('runs')
    .summary('list every run, here and in fetched remote journals')
    .description(
      'List every run in this repository\'s agent-journal branch and in remote-tracking journals ' +
        '(refs/remotes/*/agent-journal, after "git fetch"): id, status, steps, model calls, tokens, ' +
        'how often it was resumed, last activity and task. A run in both is shown once, from the local journal.',
    )
    .option('--json', 'print the runs as JSON (see README, "Reading runs")')
    .action(async (flags: { json?: boolean }) => {
      const runs = await listRunSummaries(await openJournals(process.cwd()));
      if (flags.json) process.stdout.write(`${JSON.stringify({ runs: runs.map(runJson) }, null, 2)}\n`);
      else printRuns(runs, process.stdout, styleFor(process.stdout), Date.now());
    });
}

// The JSON row of one run: its summary and, for a run that could not be read whole, why.
export function runJson(run: RunRow): RunSummary & { problem: string | null } {
  return { ...run.summary, problem: run.problem };
}

// The human table.
export function printRuns(runs: RunRow[], out: Out, style: Style, now: number): void {
  if (runs.length === 0) {
    out.write('No runs yet. Start one with "savepoint run <task>", or watch one with "savepoint demo".\n');
    return;
  }
  const rows = runs.map((run) => {
    const s = run.summary;
    return {
      id: s.id,
      status: run.problem ? 'corrupt' : s.status,
      steps: String(s.steps),
      calls: String(s.modelCalls),
      tokens: `${compactCount(s.tokens.input)} / ${compactCount(s.tokens.output)}`,
      resumed: s.resumes ? `${s.resumes}×` : '–',
      last: relativeTime(s.lastActivity, now),
      task: s.task,
      note: run.problem ? `cannot be read whole: ${run.problem}` : whereNote(s),
    };
  });
  // Columns in the order shown; on a narrow terminal the least needed go first (never id or status).
  const columns: Array<{ key: Exclude<keyof (typeof rows)[number], 'note'>; head: string; align: 'left' | 'right'; drop: number }> = [
    { key: 'id', head: 'RUN', align: 'left', drop: 0 },
    { key: 'status', head: 'STATUS', align: 'left', drop: 0 },
    { key: 'steps', head: 'STEPS', align: 'right', drop: 4 },
    { key: 'calls', head: 'CALLS', align: 'right', drop: 3 },
    { key: 'tokens', head: 'TOKENS IN / OUT', align: 'right', drop: 2 },
    { key: 'resumed', head: 'RESUMED', align: 'right', drop: 1 },
    { key: 'last', head: 'LAST ACTIVITY', align: 'left', drop: 5 },
  ];
  const widthOf = (c: (typeof columns)[number]) => Math.max(c.head.length, ...rows.map((r) => r[c.key].length)); // ids are never cut
  let shown = columns;
  const tableWidth = () => shown.reduce((sum, c) => sum + widthOf(c) + 2, -2);
  for (let level = 1; level <= 5 && tableWidth() > style.width; level++) shown = shown.filter((c) => c.drop === 0 || c.drop > level);
  const taskWidth = style.width - tableWidth() - 2;
  const line = (cells: Record<string, string>, task: string, paint: (key: string, text: string) => string) =>
    [...shown.map((c) => paint(c.key, c.align === 'left' ? padVisible(cells[c.key]!, widthOf(c)) : padVisible(cells[c.key]!, widthOf(c), 'right'))), taskWidth >= 12 ? fit(task, taskWidth) : '']
      .join('  ')
      .trimEnd();
  const heads = Object.fromEntries(columns.map((c) => [c.key, c.head]));
  out.write(`${style.dim(line(heads, 'TASK', (_, t) => t))}\n`);
  for (const r of rows) {
    const paint = (key: string, text: string) => (key === 'id' ? style.bold(text) : key === 'status' ? text.replace(r.status, paintStatus(r.status as RunSummary['status'] | 'corrupt', style)) : text);
    out.write(`${line(r, r.task, paint)}\n`);
    if (taskWidth < 12 && r.task) out.write(`  ${style.dim(fit(r.task, style.width - 2))}\n`);
    if (r.note) out.write(`  ${style.dim(`↳ ${fit(r.note, style.width - 4)}`)}\n`);
  }
  const remote = runs.filter((r) => r.summary.shownFrom !== 'local').length;
  const count = `${runs.length} run${runs.length === 1 ? '' : 's'}${remote ? ` (${remote} only in a remote-tracking journal)` : ''}.`;
  out.write(style.dim(`\n${fit(count, style.width)}\n${fit('"savepoint log <run>" shows its steps; "savepoint show <run> <step>" one in full.', style.width)}\n`));
}
