// Comparing trees: which files differ between two trees, descending only into subtrees whose ids
// differ, so the cost follows the change, not the repository. Used by journal sync (a run changed
// on both sides) and by the working-tree checkpoints (drift, restore).
import { TREE_MODE, type Tree, type TreeEntry } from './git-object.js';
import type { FileChange } from '../errors/index.js';
import type { ObjectStore } from './object-store.js';

/** One file that differs between two trees (defined in errors/, where DriftError reports it). */
export type { FileChange } from '../errors/index.js';

/** Files that differ from tree `a` to tree `b` (either may be undefined: empty). */
export async function diffTrees(objects: ObjectStore, a: string | undefined, b: string | undefined, prefix = ''): Promise<FileChange[]> {
  if (a === b) return [];
  const left: Tree = a ? await objects.readTree(a) : new Map();
  const right: Tree = b ? await objects.readTree(b) : new Map();
  const changes: FileChange[] = [];
  for (const name of [...new Set([...left.keys(), ...right.keys()])].sort()) {
    const l = left.get(name);
    const r = right.get(name);
    if (l && r && l.oid === r.oid && l.mode === r.mode) continue;
    const path = `${prefix}${name}`;
    const lTree = l?.mode === TREE_MODE ? l.oid : undefined;
    const rTree = r?.mode === TREE_MODE ? r.oid : undefined;
    if (lTree || rTree) changes.push(...(await diffTrees(objects, lTree, rTree, `${path}/`)));
    if (l && !lTree && r && !rTree) changes.push({ path, change: 'modified' });
    else if (l && !lTree && !(r && !rTree)) changes.push({ path, change: 'deleted' });
    else if (r && !rTree && !(l && !lTree)) changes.push({ path, change: 'added' });
  }
  return changes;
}

/** Every file of a tree: path -> mode and blob id. */
export async function flattenTree(
  objects: ObjectStore,
  oid: string,
  prefix = '',
  out = new Map<string, TreeEntry>(),
): Promise<Map<string, TreeEntry>> {
  for (const [name, entry] of await objects.readTree(oid)) {
    if (entry.mode === TREE_MODE) await flattenTree(objects, entry.oid, `${prefix}${name}/`, out);
    else out.set(`${prefix}${name}`, entry);
  }
  return out;
}
