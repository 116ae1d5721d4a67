// Checks shared by the crash tests: what the git CLI must find after every kill, and what every
// child's own report must say, given the steps earlier children reported done.
import assert from 'node:assert/strict';
import { assertFsckClean, journalFiles, refNames, runGit } from './git.js';
import type { AppenderReport } from './journal-child.js';

export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
export const resultFile = (run: string, step: number, intentEvery = 3) => {
  const kind = intentEvery > 0 && step % intentEvery === 0 ? 'command' : 'work';
  return `runs/${run}/steps/000/${String(step).padStart(6, '0')}-${kind}.json`;
};

export async function branchExists(root: string): Promise<boolean> {
  return (await runGit(root, ['rev-parse', '--verify', '-q', 'refs/heads/agent-journal'])).code === 0;
}

// The journal's commits of one run, oldest first.
export async function runSubjects(root: string, run: string): Promise<string[]> {
  if (!(await branchExists(root))) return [];
  const out = (await runGit(root, ['log', '--reverse', '--format=%s', 'agent-journal'])).stdout;
  return out.split('\n').filter((s) => s.startsWith(`${run} `));
}

/**
 * The journal's commits of `run` that append a step or the run's end: without the notes a rerun of a
 * step left in flight writes first (its attempt in run.json, so that a kill before its result leaves
 * a trace). Each note must follow the intent of the step it runs again, and no step gets two in a row.
 */
export function appendsOf(subjects: string[]): string[] {
  const note = /^\S+ #(\d+) .* \(running again: in flight at a crash\)$/;
  subjects.forEach((subject, i) => {
    const step = note.exec(subject)?.[1];
    if (!step) return;
    const intent = subjects.slice(0, i).findLast((s) => s.includes(` #${step} `));
    assert.ok(intent?.endsWith('(started)') || (intent !== undefined && note.test(intent)), `a rerun note follows the intent of step ${step}:\n${subjects.join('\n')}`);
  });
  return subjects.filter((subject) => !note.test(subject));
}

// What must hold after every kill: git finds nothing wrong, sees no ref but main and the journal,
// and every step the child (or an earlier one) reported done has its result on the branch.
export async function checkAfterKill(root: string, run: string, durable: Set<number>, context: string, intentEvery = 3): Promise<void> {
  await assertFsckClean(root, context);
  const refs = await refNames(root);
  assert.ok(
    refs.every((ref) => ref === 'refs/heads/main' || ref === 'refs/heads/agent-journal'),
    `git sees only main and agent-journal (${context}): ${refs.join(', ')}`,
  );
  if (durable.size === 0) return;
  const files = new Set(await journalFiles(root, `runs/${run}/steps`));
  for (const step of durable) assert.ok(files.has(resultFile(run, step, intentEvery)), `step ${step}, reported done, is on the branch (${context})`);
}

// What must hold for every child's own report, given the steps earlier children reported done.
export function checkReport(report: AppenderReport, durable: Set<number>, context: string): void {
  assert.ok(report.code !== 1 && report.code !== 3, `the child failed (${context}): exit ${report.code}\n${report.stderr}`);
  assert.ok(report.signal === 'SIGKILL' || report.code === 0, `the child ended with ${report.signal ?? report.code} (${context})\n${report.stderr}`);
  assert.deepEqual(report.done, range(1, report.done.length), `steps return in order (${context})`);
  assert.deepEqual(report.replayed, range(1, report.replayed.length), `replays are 1..n in order (${context})`);
  const lastDurable = Math.max(0, ...durable);
  for (const step of report.started) assert.ok(!durable.has(step), `step ${step} was done before, yet ran live again (${context})`);
  if (report.started.length > 0) {
    const firstLive = Math.min(...report.started);
    assert.ok(firstLive > lastDurable, `went live at ${firstLive}, before the recorded step ${lastDurable} (${context})`);
    assert.deepEqual(report.replayed, range(1, firstLive - 1), `replayed every recorded step before going live (${context})`);
  }
}

