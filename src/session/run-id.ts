// Run ids derived from the task text, so that the identical command finds the same run again.
import { createHash } from 'node:crypto';

/** `fix-the-failing-test-3fa9c1`: a readable slug of the task and a short digest of its exact text. */
export function runIdForTask(task: string): string {
  const slug = task
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  const digest = createHash('sha256').update(task.trim()).digest('hex').slice(0, 6);
  return `${slug || 'run'}-${digest}`;
}

/** The latest of a task's runs (`id`, `id-2`, `id-3`, ... made by --fresh), and the next free id. */
export function runsForTask(base: string, existing: Iterable<string>): { latest?: string; next: string } {
  let latest: string | undefined;
  let highest = 0;
  for (const id of existing) {
    const n = id === base ? 1 : id.startsWith(`${base}-`) && /^\d+$/.test(id.slice(base.length + 1)) ? Number(id.slice(base.length + 1)) : 0;
    if (n > highest) {
      highest = n;
      latest = id;
    }
  }
  return { latest, next: highest === 0 ? base : `${base}-${highest + 1}` };
}
