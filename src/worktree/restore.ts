// Putting the working tree back to a checkpoint: after a crash that left files half-changed, on a
// fresh clone on another machine, or at a fork point. Only files that differ are written. A file
// the checkpoint does not have is deleted only when git tracks it (so git can bring it back);
// untracked files the run never recorded are kept, and the caller is told which.
import { chmodSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ObjectStore } from '../journal/objects.js';
import type { Snapshot } from './snapshot.js';
import { flattenTree } from './tree-diff.js';

export interface RestoreResult {
  written: string[];
  deleted: string[];
  // Untracked files that are not in the checkpoint, left as they are.
  kept: string[];
}

// Makes the working tree at `root` match the checkpoint tree `target`, given its current snapshot
// and the set of paths git tracks.
export async function restoreWorktree(root: string, objects: ObjectStore, target: string, current: Snapshot, tracked: ReadonlySet<string>): Promise<RestoreResult> {
  const wanted = await flattenTree(objects, target);
  const result: RestoreResult = { written: [], deleted: [], kept: [] };
  for (const [path, entry] of wanted) {
    const have = current.files.get(path);
    if (have && have.oid === entry.oid && have.mode === entry.mode) continue;
    if (entry.mode === '160000') continue; // a submodule: its own repository
    const full = join(root, path);
    const content = await objects.read(entry.oid, 'blob');
    mkdirSync(dirname(full), { recursive: true });
    rmSync(full, { force: true, recursive: false });
    if (entry.mode === '120000') symlinkSync(content.toString('utf8'), full);
    else {
      writeFileSync(full, content);
      chmodSync(full, entry.mode === '100755' ? 0o755 : 0o644);
    }
    result.written.push(path);
  }
  // A checkpoint from before submodules were recorded as trees has their gitlinks: their files stay.
  const gitlinks = [...wanted].filter(([, entry]) => entry.mode === '160000').map(([path]) => `${path}/`);
  for (const path of current.files.keys()) {
    if (wanted.has(path) || gitlinks.some((prefix) => path.startsWith(prefix))) continue;
    if (tracked.has(path)) {
      unlinkSync(join(root, path));
      result.deleted.push(path);
    } else {
      result.kept.push(path);
    }
  }
  return result;
}
