// The code diff a step made: its working-tree checkpoint (a git tree id) against the checkpoint
// before it, or against the run's base commit for the first one, as `git diff` prints it.
import type { Timeline } from '../../report/summarize.js';

// git's empty tree: the base of a run that started in a repository with no commit.
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** What a step's diff is taken against, and its text. */
export interface StepDiff {
  /** The tree-ish diffed from, and a label for people (`checkpoint of #4`, `base commit 1a2b3c4`). */
  from: string;
  fromLabel: string;
  to: string;
  /** The unified diff (empty when the step left the files as they were), or why it could not be made. */
  text: string;
  error: string | null;
}

/**
 * Where the step's diff starts: the closest earlier checkpoint, else the working tree the run
 * started from, else its base commit.
 */
export function diffBase(timeline: Timeline, step: number): { from: string; fromLabel: string } {
  const earlier = timeline.steps.filter((s) => s.step < step && s.checkpoint).at(-1);
  if (earlier) return { from: earlier.checkpoint!, fromLabel: `the checkpoint of #${earlier.step}` };
  if (timeline.startCheckpoint) return { from: timeline.startCheckpoint, fromLabel: 'the working tree when the run started' };
  if (timeline.baseCommit) return { from: timeline.baseCommit, fromLabel: `the base commit ${timeline.baseCommit.slice(0, 10)}` };
  return { from: EMPTY_TREE, fromLabel: 'an empty tree' };
}

/** The diff of `step`, or undefined when the step has no checkpoint. */
export async function stepDiff(root: string, timeline: Timeline, step: number, options: { color?: boolean; stat?: boolean } = {}): Promise<StepDiff | undefined> {
  const to = timeline.steps.find((s) => s.step === step)?.checkpoint;
  if (!to) return undefined;
  const { from, fromLabel } = diffBase(timeline, step);
  const args = ['diff', '--no-ext-diff', '--no-textconv', options.color ? '--color=always' : '--no-color', ...(options.stat ? ['--stat', '--patch'] : []), '--end-of-options', from, to];
  const { execa } = await import('execa'); // loaded on first use: `runs` and most commands never diff
  const result = await execa('git', args, { cwd: root, reject: false, stdin: 'ignore', stripFinalNewline: false, env: { GIT_PAGER: 'cat' } });
  if (result.exitCode !== 0) {
    const why = String(result.stderr).trim().split('\n')[0] || `git diff exited with ${result.exitCode}`;
    return { from, fromLabel, to, text: '', error: `git cannot compare the trees (${why}); fetch the journal's objects, or the base commit, first` };
  }
  return { from, fromLabel, to, text: String(result.stdout), error: null };
}

/** The diffs of every checkpointed step of a run (for the HTML page), by step number. */
export async function allStepDiffs(root: string, timeline: Timeline): Promise<Map<number, StepDiff>> {
  const diffs = new Map<number, StepDiff>();
  for (const s of timeline.steps) {
    if (!s.checkpoint) continue;
    const diff = await stepDiff(root, timeline, s.step);
    if (diff) diffs.set(s.step, diff);
  }
  return diffs;
}
