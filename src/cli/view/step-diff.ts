// The code diff a step made: its working-tree checkpoint (a git tree id) against the checkpoint
// before it, or against the run's base commit for the first one, as `git diff` prints it.
import { buildOwnGit } from '../../git/repository.js';
import { runProcess } from '../../os/processes.js';
import type { Timeline } from '../../report/summarize.js';
import type { Style } from '../terminal/style.js';
import { DEFAULT_MAX_FILE_BYTES } from '../../worktree/entries.js';

// git's empty tree: the base of a run that started in a repository with no commit.
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

// A file larger than checkpoints record (a fetched journal's, or a big tracked file) is diffed as
// binary, never loaded whole by git nor printed line by line.
const BIG_AS_BINARY = ['-c', `core.bigFileThreshold=${DEFAULT_MAX_FILE_BYTES}`];

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
export async function stepDiff(
  root: string,
  timeline: Timeline,
  step: number,
  options: { color?: boolean; stat?: boolean } = {},
): Promise<StepDiff | undefined> {
  const to = timeline.steps.find((s) => s.step === step)?.checkpoint;
  if (!to) return undefined;
  const { from, fromLabel } = diffBase(timeline, step);
  const args = [
    ...BIG_AS_BINARY,
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    options.color ? '--color=always' : '--no-color',
    ...(options.stat ? ['--stat', '--patch'] : []),
    '--end-of-options',
    from,
    to,
  ];
  const git = buildOwnGit(args);
  const result = await runGit(git.args, { cwd: root, env: { ...git.env, GIT_PAGER: 'cat' } });
  if (result.exitCode !== 0) {
    const why = String(result.stderr).trim().split('\n')[0] || `git diff exited with ${result.exitCode}`;
    return {
      from,
      fromLabel,
      to,
      text: '',
      error: `git cannot compare the trees (${why}); fetch the journal's objects, or the base commit, first`,
    };
  }
  return { from, fromLabel, to, text: String(result.stdout), error: null };
}

/**
 * The diffs of every checkpointed step of a run (for the HTML page), by step number: one git
 * process for all of them (`git diff-tree --stdin` reads the pairs of trees and echoes each before
 * its diff), each step's base found in one pass, so a run of thousands of steps costs about what
 * its diffs do, not a process and a scan of the steps each.
 */
export async function allStepDiffs(root: string, timeline: Timeline): Promise<Map<number, StepDiff>> {
  const pairs: Array<{ step: number; from: string; fromLabel: string; to: string }> = [];
  let base = diffBase(timeline, 0);
  for (const s of timeline.steps) {
    if (!s.checkpoint) continue;
    pairs.push({ step: s.step, ...base, to: s.checkpoint });
    base = { from: s.checkpoint, fromLabel: `the checkpoint of #${s.step}` };
  }
  const diffs = new Map<number, StepDiff>();
  if (!pairs.length) return diffs;
  const base0 = pairs[0]!.from;
  // diff-tree compares trees: the base commit is given as its tree.
  if (pairs[0]!.from === timeline.baseCommit && /^[0-9a-f]{40}$/.test(timeline.baseCommit)) {
    const tree = await runGit(['rev-parse', '--verify', '--quiet', `${timeline.baseCommit}^{tree}`], { cwd: root });
    if (tree.exitCode !== 0) return eachAlone(root, timeline, pairs); // the base commit is not here: each step says so
    pairs[0]!.from = String(tree.stdout).trim();
  }
  const input = pairs.map((p) => `${p.from} ${p.to}\n`).join('');
  const result = await runGit([...BIG_AS_BINARY, 'diff-tree', '--stdin', '-r', '-p', '--no-color', '--no-commit-id'], { cwd: root, input });
  // Some tree is missing (a journal fetched without its objects): each step alone says which.
  if (result.exitCode !== 0) return eachAlone(root, timeline, pairs);
  // The output is each echoed pair, then its diff (nothing when the trees are the same). git 2.39
  // leaves out a pair whose tree is missing and still exits 0: a pair not echoed is such a one,
  // and each step alone then says which (read on, every later step would have shown no change).
  const lines = String(result.stdout).split('\n');
  let i = 0;
  for (const [n, p] of pairs.entries()) {
    const header = `${p.from} ${p.to}`;
    while (i < lines.length && lines[i] !== header) i++;
    if (i === lines.length) return eachAlone(root, timeline, pairs);
    const start = ++i;
    const next = pairs[n + 1];
    const nextHeader = next ? `${next.from} ${next.to}` : undefined;
    while (i < lines.length && lines[i] !== nextHeader) i++;
    const body = lines.slice(start, i);
    const text = body.length && body.some((line) => line !== '') ? `${body.join('\n').replace(/\n*$/, '')}\n` : '';
    diffs.set(p.step, { from: n === 0 ? base0 : p.from, fromLabel: p.fromLabel, to: p.to, text, error: null });
  }
  return diffs;
}

// git with `args`, its output whole (utf8). No git: told as its exit (-1), its error as stderr.
async function runGit(
  args: string[],
  options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv },
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await runProcess('git', args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  const failure = result.error?.message ?? '';
  return {
    exitCode: failure ? -1 : (result.code ?? -1),
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8') || failure,
  };
}

// The diffs one git process each, for when some cannot be made: each step then says why.
async function eachAlone(root: string, timeline: Timeline, pairs: Array<{ step: number }>): Promise<Map<number, StepDiff>> {
  const diffs = new Map<number, StepDiff>();
  for (const p of pairs) {
    const diff = await stepDiff(root, timeline, p.step);
    if (diff) diffs.set(p.step, diff);
  }
  return diffs;
}

/**
 * A unified diff coloured as git colours one: headers bold, hunks cyan, additions green, removals
 * red. Coloured here rather than by git, after control characters are made visible, so no escape
 * in a file's content reaches the terminal (`show` and the approval question colour the same way).
 */
export function paintDiff(text: string, style: Style): string {
  if (!style.color) return text;
  let inHeader = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('diff --git ')) inHeader = true;
      else if (line.startsWith('@@')) inHeader = false;
      if (inHeader) return style.bold(line);
      if (line.startsWith('@@')) return style.cyan(line);
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      return line;
    })
    .join('\n');
}
