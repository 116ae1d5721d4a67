// Run ids derived from the task text, so that the identical command finds the same run again. The
// text is normalised first (runs of whitespace, trailing punctuation), so "Fix the tests" and
// "Fix the  tests." are one run. Case is kept: "Fix the tests" and "fix the tests" are two tasks
// and two runs (a task may name a file or a flag where case matters).
//
// Two older id schemes are still found, so that runs made by earlier builds go on: a digest of the
// exact trimmed text (the first), and a digest of the case-folded text (the second). A case-folded
// id can belong to a task that differs from this one in case only, so it is taken only after the
// run's recorded task is checked to be this very task (sameTask). Checking it for every scheme also
// keeps two different tasks whose digests collide from sharing a run.
import { createHash } from 'node:crypto';
import { AmbiguousRunError } from '../errors/index.js';

/** The task as ids and comparisons see it: single spaces, no trailing punctuation, its case kept. */
export function normalizeTask(task: string): string {
  return task
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[\s.!?,;:\u2026]+$/u, ''); // \u2026 is the ellipsis: a regular expression's characters stay ASCII (scripts/bundle.js)
}

/** `fix-the-failing-test-3fa9c1`: a readable slug of the task and a short digest of its normalised text. */
export function runIdForTask(task: string): string {
  return `${slugOf(task)}-${digest(normalizeTask(task))}`;
}

/** The id the task had before ids were normalised (a digest of its exact trimmed text), so older runs are found. */
export function legacyRunIdForTask(task: string): string {
  return `${slugOf(task)}-${digest(task.trim())}`;
}

/**
 * The id the task had while ids folded case (a digest of its lower-cased normalised text). Shared
 * by every task that differs from this one only in case: check the run's recorded task before
 * taking it.
 */
export function caseFoldedRunIdForTask(task: string): string {
  return `${slugOf(task)}-${digest(normalizeTask(task).toLowerCase())}`;
}

/** The id bases a task's runs may have, the current scheme first, then the older ones, each once. */
export function taskRunBases(task: string): string[] {
  return [...new Set([runIdForTask(task), caseFoldedRunIdForTask(task), legacyRunIdForTask(task)])];
}

/** Whether a run recorded for `recorded` is a run of `task`: the same text once normalised, case included. */
export function sameTask(recorded: string, task: string): boolean {
  return normalizeTask(recorded) === normalizeTask(task);
}

function slugOf(task: string): string {
  const slug = task
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return slug || 'run';
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 6);
}

/** The latest of a task's runs (`id`, `id-2`, `id-3`, ... made by --fresh), and the next free id. */
export function runsForTask(base: string, existing: Iterable<string>): { latest?: string; next: string } {
  let latest: string | undefined;
  let highest = 0;
  for (const id of existing) {
    const n =
      id === base ? 1 : id.startsWith(`${base}-`) && /^\d+$/.test(id.slice(base.length + 1)) ? Number(id.slice(base.length + 1)) : 0;
    if (n > highest) {
      highest = n;
      latest = id;
    }
  }
  return { latest, next: highest === 0 ? base : `${base}-${highest + 1}` };
}

/** The run `given` names among `ids`: itself, or the one id it is a prefix of; undefined when none. Throws AmbiguousRunError when several start with it. */
export function resolveRunId(given: string, ids: readonly string[]): string | undefined {
  if (ids.includes(given)) return given;
  const matches = ids.filter((id) => id.startsWith(given));
  // A prefix of a run is a prefix of its subagents too (`<run>.task<step>`): it names the parent.
  const parents = matches.filter((id) => matches.every((other) => other === id || other.startsWith(`${id}${SUBAGENT_MARK}`)));
  if (matches.length > 1 && parents.length === 1) return parents[0];
  if (matches.length > 1) throw new AmbiguousRunError(given, matches);
  return matches[0];
}

// The part of a subagent's run id after its parent's: `<parent>.task<step>`.
const SUBAGENT_MARK = '.task';

/**
 * The run id of the subagent that the `task` call at `step` of run `parent` starts: derived from
 * both, so the identical command finds the same subagent again after a crash. A parent id too long
 * for the suffix keeps its head and a digest of the whole (ids stay within 100 characters).
 */
export function subagentRunId(parent: string, step: number): string {
  const suffix = `${SUBAGENT_MARK}${step}`;
  if (parent.length + suffix.length <= 100) return `${parent}${suffix}`;
  const base = `${parent.slice(0, 100 - suffix.length - 7).replace(/[.-]+$/, '')}-${digest(parent)}`;
  return `${base}${suffix}`;
}
