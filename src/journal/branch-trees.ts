// The branch's trees, as the journal stores share them: an append's files grouped by directory and
// the trees on their paths rebuilt bottom-up on the tip's root tree, reusing every untouched
// subtree; and the tree at a path under the tip. Shared by the git store and the in-memory one, so
// both put the same objects on the branch and read them the same way.
import { StepAlreadyRecordedError } from '../errors/index.js';
import {
  FILE_MODE,
  TREE_MODE,
  makeObject,
  makeTree,
  nestPaths,
  type GitObject,
  type PathDir,
  type Tree,
  type TreeEntry,
} from '../git/git-object.js';
import type { JournalFile } from './store-options.js';

type DirChanges = PathDir<TreeEntry>;
// A run's step file (entry) on the branch: written once, never replaced (see buildTrees).
const STEP_FILE = /^runs\/[^/]+\/steps\/.+\.json$/;

/** How buildTrees reads a tree, and what it tells of each tree it made (and the one it replaced). */
export interface TreeSource {
  tree(oid: string): Promise<Tree>;
  made?(oid: string, entries: Tree, replaced: string | undefined): void;
}

/**
 * The root tree of `root` with `files` added; every new object (blobs, trees) is pushed to `out`.
 * A step file is written once: one already on the branch `ref` with other content was recorded by
 * another process (one that took the run over while this one was paused, say). Replacing it would
 * rewrite the past of a run that replays from it, so the append stops (StepAlreadyRecordedError).
 */
export function buildTrees(
  source: TreeSource,
  root: string | undefined,
  files: JournalFile[],
  out: GitObject[],
  ref: string,
): Promise<string> {
  return rebuild(source, root, groupByDirectory(files, out), out, ref, '');
}

async function rebuild(
  source: TreeSource,
  oid: string | undefined,
  changes: DirChanges,
  out: GitObject[],
  ref: string,
  path: string,
): Promise<string> {
  const entries: Tree = new Map(oid ? await source.tree(oid) : undefined);
  for (const [name, sub] of changes.dirs) {
    const existing = entries.get(name);
    const child = await rebuild(
      source,
      existing?.mode === TREE_MODE ? existing.oid : undefined,
      sub,
      out,
      ref,
      path ? `${path}/${name}` : name,
    );
    entries.set(name, { mode: TREE_MODE, oid: child });
  }
  for (const [name, entry] of changes.files) {
    const there = entries.get(name);
    if (there && there.oid !== entry.oid && STEP_FILE.test(`${path}/${name}`)) throw new StepAlreadyRecordedError(`${path}/${name}`, ref);
    entries.set(name, entry);
  }
  const tree = makeTree(entries);
  source.made?.(tree.oid, entries, oid);
  out.push(tree);
  return tree.oid;
}

function groupByDirectory(files: JournalFile[], blobs: GitObject[]): DirChanges {
  return nestPaths(
    files.map((file): [string, TreeEntry] => {
      if ('tree' in file) return [file.path, { mode: TREE_MODE, oid: file.tree }];
      const blob = makeObject('blob', Buffer.from(file.content));
      blobs.push(blob);
      return [file.path, { mode: FILE_MODE, oid: blob.oid }];
    }),
  );
}

/** The tree at `path` ('' for the root) under root tree `root`, or undefined when there is none. */
export async function treeAtPath(source: TreeSource, root: string | undefined, path: string): Promise<Tree | undefined> {
  let oid = root;
  for (const name of path.split('/').filter(Boolean)) {
    if (!oid) return undefined;
    const entry = (await source.tree(oid)).get(name);
    if (!entry || entry.mode !== TREE_MODE) return undefined;
    oid = entry.oid;
  }
  return oid ? source.tree(oid) : undefined;
}

/** The id of the file at `path` under root tree `root`, or undefined when there is none. */
export async function fileAtPath(source: TreeSource, root: string | undefined, path: string): Promise<string | undefined> {
  const slash = path.lastIndexOf('/');
  const entry = (await treeAtPath(source, root, path.slice(0, Math.max(slash, 0))))?.get(path.slice(slash + 1));
  return entry && entry.mode !== TREE_MODE ? entry.oid : undefined;
}
