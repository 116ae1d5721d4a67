// `savepoint runs`: every run in the local journal and in the remote-tracking ones, most recently
// active first: id, status, steps, model calls, tokens, resumes, last activity and task.
// Tested in test/cli/finding-runs.test.ts.
import type { Writable } from 'node:stream';
import { Command } from 'commander';
import { compactCount } from '../../format/numbers.js';
import { fitColumns, showControlsIn, terminalJson } from '../../format/text.js';
import { relativeTime } from '../../format/time.js';
import { listAllRuns, openJournals, type ListedRun } from '../../report/journal-runs.js';
import { worktreeRoots } from '../../git/repository.js';
import type { RunSummary } from '../../report/summarize.js';
import { paintStatus, padVisible, whereNote } from '../view/run-format.js';
import { styleFor, type Style } from '../terminal/style.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

/** The `runs` command. */
export function runsCommand(): Command {
  return new Command('runs')
    .summary("list this worktree's runs and those from other machines (--all: every worktree's too)")
    .description(
      'List the runs of this worktree (created here, or gone live here) and those from other machines (in ' +
        'remote-tracking journals, refs/remotes/*/agent-journal, after "git fetch" or a --push fetch, or folded in ' +
        'from them); with --all, the runs of every other worktree of this repository too: id, status, steps, model calls, tokens, ' +
        'how often it was resumed, last activity, task, and where each lives. A run in several journals is shown once, from the local journal.',
    )
    .option('--all', "list every worktree's runs too (default: this worktree's and those from other machines)")
    .option('--json', 'print the runs as JSON (see docs/json-events.md)')
    .action(async (flags: { json?: boolean; all?: boolean }) => {
      const journals = await openJournals(process.cwd());
      const all = await listAllRuns(journals);
      const worktrees = worktreeRoots(journals.repo);
      const placed = all.map((run) => ({ ...run, place: placeOf(run, journals.repo.root, worktrees) }));
      const runs = flags.all ? placed : placed.filter((run) => run.place !== 'other-worktree');
      if (flags.json) process.stdout.write(`${terminalJson({ runs: runs.map(runJson) }, 2)}\n`);
      else printRuns(runs, process.stdout, styleFor(process.stdout), Date.now(), all.length - runs.length);
    });
}

/**
 * Where a run lives, as `runs` says it: `this-worktree` (created here, gone live here, or too old to
 * say), `other-worktree` (created in another worktree of this repository: listed with --all), or
 * `elsewhere` (from another machine: only in a fetched journal, or created in a folder that is no
 * worktree of this repository, so `resume` here is how it goes on).
 */
export type RunPlace = 'this-worktree' | 'other-worktree' | 'elsewhere';

function placeOf(run: ListedRun, root: string, worktrees: Set<string>): RunPlace {
  const s = run.summary;
  if (s.shownFrom === 'local' && (s.worktree === null || s.worktree === root || s.wentLive.includes(root))) return 'this-worktree';
  if (s.worktree !== null && worktrees.has(s.worktree)) return 'other-worktree';
  return 'elsewhere';
}

/** A listed run and where it lives. */
export type PlacedRun = ListedRun & { place: RunPlace };

/** The JSON row of one run: its summary, where it lives and, for a run that could not be read whole, why. */
export function runJson(run: PlacedRun): RunSummary & { place: RunPlace; problem: string | null } {
  return { ...run.summary, place: run.place, problem: run.problem };
}

// `2 follow-ups, latest "now add a test"`, or '' for a run with none.
function followUpNote(followUps: string[]): string {
  if (followUps.length === 0) return '';
  return `${followUps.length} follow-up${followUps.length === 1 ? '' : 's'}, latest "${fitColumns(followUps.at(-1)!, 60)}"`;
}

/** The runs in order, each subagent right under its parent (by the parent's step); one whose parent is not listed stays where it was. */
export function underParents<Run extends ListedRun>(runs: Run[]): Run[] {
  const ids = new Set(runs.map((run) => run.summary.id));
  const children = new Map<string, Run[]>();
  for (const run of runs) {
    const parent = run.summary.parent;
    if (parent && ids.has(parent.run)) children.set(parent.run, [...(children.get(parent.run) ?? []), run]);
  }
  const ordered: Run[] = [];
  for (const run of runs) {
    const parent = run.summary.parent;
    if (parent && ids.has(parent.run)) continue;
    ordered.push(run, ...(children.get(run.summary.id) ?? []).sort((a, b) => a.summary.parent!.step - b.summary.parent!.step));
  }
  return ordered;
}

/** The human table. */
export function printRuns(listed: PlacedRun[], out: Out, style: Style, now: number, hidden = 0): void {
  // Ids, tasks, models and problems come from journals, fetched ones too: shown, never obeyed.
  const runs = showControlsIn(underParents(listed));
  const elsewhere = hidden
    ? `${hidden} more run${hidden === 1 ? '' : 's'} in other worktrees of this repository: "savepoint runs --all" lists them.`
    : '';
  if (runs.length === 0) {
    out.write(
      hidden
        ? `No runs in this worktree yet. ${elsewhere}\n`
        : 'No runs yet. Start one with "savepoint run <task>", or watch one with "savepoint demo".\n',
    );
    return;
  }
  const rows = runs.map((run) => {
    const s = run.summary;
    return {
      // A subagent sits under its parent, marked: resuming the parent goes on with it.
      id: s.parent ? `└ ${s.id}` : s.id,
      status: run.problem ? 'corrupt' : s.status,
      steps: String(s.steps),
      calls: String(s.modelCalls),
      tokens: `${compactCount(s.tokens.input)} / ${compactCount(s.tokens.output)}`,
      resumed: s.resumes ? `${s.resumes}×` : '–',
      last: relativeTime(s.lastActivity, now),
      task: s.task || (s.steps === 0 ? '(live at its first step)' : ''),
      note: run.problem
        ? `cannot be read whole: ${run.problem}`
        : [
            s.parent ? `subagent "${s.parent.description}" of ${s.parent.run}'s task call at #${s.parent.step}` : '',
            followUpNote(s.followUps),
            whereNote(s, run.place),
          ]
            .filter(Boolean)
            .join(' · '),
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
  const widths = new Map(columns.map((c) => [c, rows.reduce((most, r) => Math.max(most, r[c.key].length), c.head.length)])); // ids are never cut
  const widthOf = (c: (typeof columns)[number]) => widths.get(c)!;
  let shown = columns;
  const tableWidth = () => shown.reduce((sum, c) => sum + widthOf(c) + 2, -2);
  for (let level = 1; level <= 5 && tableWidth() > style.width; level++) shown = shown.filter((c) => c.drop === 0 || c.drop > level);
  const taskWidth = style.width - tableWidth() - 2;
  const line = (cells: Record<string, string>, task: string, paint: (key: string, text: string) => string) =>
    [
      ...shown.map((c) =>
        paint(c.key, c.align === 'left' ? padVisible(cells[c.key]!, widthOf(c)) : padVisible(cells[c.key]!, widthOf(c), 'right')),
      ),
      taskWidth >= 12 ? fitColumns(task, taskWidth) : '',
    ]
      .join('  ')
      .trimEnd();
  const heads = Object.fromEntries(columns.map((c) => [c.key, c.head]));
  // One write for the table: a thousand rows are not a thousand system calls.
  const table = [`${style.dim(line(heads, 'TASK', (_, t) => t))}\n`];
  for (const r of rows) {
    const paint = (key: string, text: string) =>
      key === 'id'
        ? style.bold(text)
        : key === 'status'
          ? text.replace(r.status, paintStatus(r.status as RunSummary['status'] | 'corrupt', style))
          : text;
    table.push(`${line(r, r.task, paint)}\n`);
    if (taskWidth < 12 && r.task) table.push(`  ${style.dim(fitColumns(r.task, style.width - 2))}\n`);
    if (r.note) table.push(`  ${style.dim(`↳ ${fitColumns(r.note, style.width - 4)}`)}\n`);
  }
  out.write(table.join(''));
  const remote = runs.filter((r) => r.summary.shownFrom !== 'local').length;
  const count = `${runs.length} run${runs.length === 1 ? '' : 's'}${remote ? ` (${remote} fetched, only in a remote-tracking journal)` : ''}.`;
  out.write(
    style.dim(
      `\n${fitColumns(count, style.width)}\n${elsewhere ? `${fitColumns(elsewhere, style.width)}\n` : ''}${fitColumns('"savepoint log <run>" shows its steps; "savepoint show <run> <step>" one in full.', style.width)}\n`,
    ),
  );
}
