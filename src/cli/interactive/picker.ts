// `savepoint -r` with no run on a terminal: the runs of this worktree, most recent first (task,
// status, when, steps), numbered; the person types a number (or a run id, or a prefix of one).
// Tested in test/cli/interactive.test.ts.
import { UsageError } from '../../errors/index.js';
import { fitColumns, showControls } from '../../format/text.js';
import { relativeTime } from '../../format/time.js';
import { listAllRuns, openJournals } from '../../report/journal-runs.js';
import { resolveRunId } from '../../session/index.js';
import { ask } from '../view/approval.js';
import { paintStatus } from '../view/run-format.js';
import type { Style } from '../terminal/style.js';

/** The most runs the picker lists. */
export const PICKER_ROWS = 20;

/** Asks which run to open; resolves with its id. Ctrl-C at the question rejects (InterruptedError). */
export async function pickRun(dir: string, style: Style, out: NodeJS.WritableStream = process.stdout): Promise<string> {
  const journals = await openJournals(dir);
  // A subagent is not offered: its parent owns it (resuming the parent resumes it).
  const runs = (await listAllRuns(journals)).filter(
    (run) =>
      run.summary.shownFrom === 'local' &&
      !run.summary.parent &&
      (run.summary.worktree === null || run.summary.worktree === journals.repo.root),
  );
  if (runs.length === 0)
    throw new UsageError('This worktree has no runs to resume yet: type a task at the savepoint prompt, or "savepoint run <task>".');
  const shown = runs.slice(0, PICKER_ROWS);
  const now = Date.now();
  out.write(`${style.bold('Runs of this worktree')}, most recent first:\n`);
  shown.forEach((run, i) => {
    const s = run.summary;
    const when = relativeTime(s.lastActivity, now);
    out.write(
      `  ${String(i + 1).padStart(2)}  ${fitColumns(showControls(s.task).replace(/\s+/g, ' '), Math.max(20, style.width - 50)).padEnd(Math.min(40, Math.max(20, style.width - 50)))}  ${paintStatus(s.status, style)}  ${style.dim(`${when}, ${s.steps} step${s.steps === 1 ? '' : 's'}`)}\n`,
    );
  });
  if (runs.length > shown.length) out.write(style.dim(`  ... and ${runs.length - shown.length} older (give the id: savepoint -r <run>)\n`));
  for (;;) {
    const answer = (await ask(`  Which run? [1-${shown.length}, or an id]: `, { output: out })).trim();
    const n = Number(answer);
    if (Number.isInteger(n) && n >= 1 && n <= shown.length) return shown[n - 1]!.id;
    const id = answer
      ? resolveRunId(
          answer,
          runs.map((run) => run.id),
        )
      : undefined;
    if (id) return id;
    out.write(`  ${answer ? `No run "${answer}" here.` : 'Type a number.'}\n`);
  }
}
