// Temp files left by killed processes: a process killed mid-write leaves the temp file it was
// writing (an object's `objects/tmp_obj_<pid>_<n>`, an append's pack `objects/tmp_pack_<pid>_<n>`
// and `tmp_idx_…`, a pack roll-up's work directory `objects/tmp_rollup_<pid>_…`, a ref's prepared
// lock content `refs/heads/.agent-journal.lock-<pid>-…`, a run lock's `<run>.lock.tmp-<pid>-…` or
// `.dead-<pid>-…`). Each name carries its writer's pid, so a later process that opens the journal
// removes the stale ones: those whose writer is gone (and that are older than any write takes),
// and any older than a writer could still be busy with, whoever wrote them (a pid is only
// meaningful on this machine, and may be reused). Three readdirs, no more: cheap at every open.
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { unlinkQuietly } from '../os/durable-file.js';
import { stillRuns } from '../os/proc.js';

/** A temp file older than this is stale whoever wrote it: no write takes that long. */
export const STALE_TEMP_MS = 15 * 60_000;

/** A temp file whose writer is gone is stale once older than this (a live write is never this slow). */
export const DEAD_WRITER_TEMP_MS = 30_000;

// Where temp files are made, and their names (the first group is the writer's pid).
const PLACES: Array<{ dir: (commonDir: string, refDir: string) => string; name: RegExp; directory?: true }> = [
  { dir: (commonDir) => join(commonDir, 'objects'), name: /^tmp_(?:obj|pack|idx)_(\d+)_\d+$/ },
  { dir: (commonDir) => join(commonDir, 'objects'), name: /^tmp_rollup_(\d+)_[^/]+$/, directory: true },
  { dir: (_, refDir) => refDir, name: /^\.[^/]+\.lock-(\d+)-\d+-\d+(?:\.tmp-\d+-\d+)?$/ },
  { dir: (commonDir) => join(commonDir, 'savepoint', 'locks'), name: /\.lock\.(?:tmp|dead)-(\d+)-[^/]*$/ },
];

/**
 * Removes the stale temp files of the journal in the git dir `commonDir` (its branch's ref lives in
 * `refDir`), and returns their paths. Files it cannot remove (a read-only repository) are left.
 */
export function removeStaleTemps(commonDir: string, refDir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  const gone = new Map<number, boolean>();
  for (const place of PLACES) {
    const dir = place.dir(commonDir, refDir);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = place.name.exec(name);
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid) continue;
      const path = join(dir, name);
      let age: number;
      try {
        age = now - lstatSync(path).mtimeMs;
      } catch {
        continue; // renamed or removed meanwhile
      }
      if (age < DEAD_WRITER_TEMP_MS) continue;
      if (age < STALE_TEMP_MS) {
        if (!gone.has(pid)) gone.set(pid, !stillRuns({ pid }));
        if (!gone.get(pid)) continue;
      }
      if (place.directory) rmSync(path, { recursive: true, force: true });
      else unlinkQuietly(path);
      removed.push(path);
    }
  }
  return removed;
}

/**
 * Removes the orphans among the pack directory `packDir`'s `names` (`present`: the same as a set):
 * a .pack with no .idx is what a kill leaves between a pack's two renames or removals (git's own
 * repack leaves the same), and an .idx with no .pack what two processes rolling up the same packs
 * at once can leave. No reader uses either, and `git count-objects` calls them garbage; once older
 * than any writer could still be busy with, they go.
 */
export function removeOrphanPackFiles(packDir: string, names: string[], present: Set<string>): void {
  for (const name of names) {
    const match = /^(pack-[0-9a-f]{40})\.(pack|idx)$/.exec(name);
    if (!match || present.has(`${match[1]}.${match[2] === 'pack' ? 'idx' : 'pack'}`)) continue;
    const path = join(packDir, name);
    try {
      if (Date.now() - lstatSync(path).mtimeMs > STALE_TEMP_MS) unlinkQuietly(path);
    } catch {
      // already gone
    }
  }
}
