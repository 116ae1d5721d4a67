// Small pieces of terminal text shared by `runs`, `log` and `show`: status words in colour, where a
// run lives, and padding of coloured text (numbers and cuts are in src/format/).
import { displayWidth } from '../../format/text.js';
import type { RunStatus, RunSummary } from '../../report/summarize.js';
import type { Style } from '../terminal/style.js';

/** The status word, coloured by what it asks of the user. */
export function paintStatus(status: RunStatus | 'corrupt', style: Style): string {
  switch (status) {
    case 'finished':
      return style.green(status);
    case 'running':
      return style.cyan(status);
    case 'interrupted':
      return style.yellow(status);
    default:
      return style.red(status); // failed, in-flight, diverged, corrupt
  }
}

/** A note on lineage and on which journals hold the run, or '' when there is nothing to say. */
export function whereNote(run: RunSummary, place?: 'this-worktree' | 'other-worktree' | 'elsewhere'): string {
  const notes: string[] = [];
  if (run.lineage) notes.push(`forked from ${run.lineage.forkedFrom} at #${run.lineage.atStep}`);
  const remotes = run.sources.filter((s) => s !== 'local');
  if (place === 'other-worktree' && run.worktree) notes.push(`in another worktree, ${run.worktree}`);
  if (run.shownFrom !== 'local')
    notes.push(`fetched from ${run.shownFrom}, only in ${run.shownFrom}/agent-journal (savepoint resume ${run.id} continues it here)`);
  else if (place === 'elsewhere')
    notes.push(
      `from another machine${run.worktree ? ` (${run.worktree})` : ''}${remotes.length ? `, fetched from ${remotes.join(', ')}` : ''}`,
    );
  else if (remotes.length) notes.push(`also in ${remotes.map((r) => `${r}/agent-journal`).join(', ')}`);
  if (run.status === 'diverged') notes.push('this machine and a remote each recorded steps the other lacks');
  return notes.join(' · ');
}

/** Visible width (terminal columns) of text that may hold colour codes. */
export function visibleLength(text: string): number {
  return displayWidth(text.replace(/\x1b\[[0-9;]*m/g, ''));
}

/** Pads coloured text to `width` visible columns. */
export function padVisible(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const pad = ' '.repeat(Math.max(0, width - visibleLength(text)));
  return align === 'left' ? text + pad : pad + text;
}
