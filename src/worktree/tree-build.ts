// The trees of a checkpoint: built whole for the first one, then only the directories on the paths
// that changed, from the trees of the last one. Paths come in as the working tree has them; each
// name goes into a tree as `record` gives it (a secret in it redacted: redact/names.ts), while the
// trees by directory stay keyed by the real paths.
// Tested in test/worktree/one-path-checkpoint.test.ts, test/worktree/snapshot.test.ts.
import { makeTree, nestPaths, parseTree, TREE_MODE, type GitObject, type PathDir, type Tree, type TreeEntry } from '../git/git-object.js';
import type { NameRecorder } from '../redact/names.js';
import type { FileEntry } from './entries.js';

const same: NameRecorder = (name) => name;

/** One directory's tree: its entries (files, and subdirectories as trees) and its id. */
export interface DirTree {
  entries: Tree;
  oid: string;
}

/** The trees of the last checkpoint by directory ('' is the root): a Map, or trees read on demand. */
export interface DirTrees {
  get(dir: string): DirTree | undefined;
  set(dir: string, tree: DirTree): unknown;
  delete(dir: string): unknown;
}

/** A tree of a checkpoint could not be read back, or is not the one git would write for its entries. */
export class UnreadableTreeError extends Error {}

/** What `read` gives, or undefined when a tree read back from the repository is not usable. */
export function unlessUnreadable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof UnreadableTreeError) return undefined;
    throw error;
  }
}

/**
 * The trees under a root tree the repository already has (HEAD's, for a checkout that matches it),
 * each read from the object store only when a later checkpoint rebuilds its directory: the first
 * checkpoint of a clean checkout then builds no tree at all. A tree is taken only if it is the one
 * git would write for its entries (sorted, canonical modes): else UnreadableTreeError, and the
 * caller builds the trees itself.
 */
export class StoredTrees implements DirTrees {
  private readonly known = new Map<string, DirTree>();
  private readonly read: (oid: string) => Buffer | undefined;

  constructor(root: string, read: (oid: string) => Buffer | undefined) {
    this.read = read;
    this.load('', root);
  }

  get(dir: string): DirTree | undefined {
    const known = this.known.get(dir);
    if (known || dir === '') return known;
    const slash = dir.lastIndexOf('/');
    const entry = this.get(slash < 0 ? '' : dir.slice(0, slash))?.entries.get(dir.slice(slash + 1));
    return entry?.mode === TREE_MODE ? this.load(dir, entry.oid) : undefined;
  }

  set(dir: string, tree: DirTree): void {
    this.known.set(dir, tree);
  }

  delete(dir: string): void {
    this.known.delete(dir); // its parent, rebuilt with it, no longer names it
  }

  private load(dir: string, oid: string): DirTree {
    const body = this.read(oid);
    if (!body) throw new UnreadableTreeError(`tree ${oid} (${dir || 'the root'}) is not readable here`);
    const entries = parseTree(body);
    if (makeTree(entries).oid !== oid) throw new UnreadableTreeError(`tree ${oid} (${dir || 'the root'}) is not as git writes trees`);
    const tree = { entries, oid };
    this.known.set(dir, tree);
    return tree;
  }
}

/**
 * Builds the nested trees for a flat map of files, handing every tree object to `out`; gives the
 * root tree and every directory's tree by path ('' is the root).
 */
export function buildTrees(
  files: Map<string, FileEntry>,
  out: { push(object: GitObject): void },
  record: NameRecorder = same,
): { root: string; dirs: Map<string, DirTree> } {
  const root = nestPaths<TreeEntry>(files);
  const dirs = new Map<string, DirTree>();
  const write = (dir: PathDir<TreeEntry>, path: string): string => {
    const entries: Tree = new Map();
    for (const [name, entry] of dir.files) entries.set(record(name), entry);
    for (const [name, sub] of dir.dirs) entries.set(record(name), { mode: TREE_MODE, oid: write(sub, path ? `${path}/${name}` : name) });
    const tree = makeTree(entries);
    out.push(tree);
    dirs.set(path, { entries, oid: tree.oid });
    return tree.oid;
  };
  return { root: write(root, ''), dirs };
}

/**
 * Rebuilds only the directories on the paths of `touched` (and their parents up to the root), from
 * the trees of the last snapshot (`base`, left unchanged). Returns the new root and, per rebuilt
 * directory, its new tree (null: the directory is now empty, and gone). An entry may itself be a
 * tree (a submodule's working tree): it is replaced or removed like a file.
 */
export function updateTrees(
  base: Pick<DirTrees, 'get'>,
  files: { get(path: string): FileEntry | undefined },
  touched: Iterable<string>,
  out: { push(object: GitObject): void },
  record: NameRecorder = same,
): { root: string; dirs: Map<string, DirTree | null> } {
  const parentOf = (path: string) => {
    const slash = path.lastIndexOf('/');
    return slash < 0 ? '' : path.slice(0, slash);
  };
  const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  // Touched file names by directory, and the dirty subdirectories of each dirty directory.
  const names = new Map<string, string[]>();
  const children = new Map<string, string[]>();
  const dirty = new Set<string>(['']);
  for (const path of touched) {
    const dir = parentOf(path);
    const list = names.get(dir);
    if (list) list.push(nameOf(path));
    else names.set(dir, [nameOf(path)]);
    for (let d = dir; d !== '' && !dirty.has(d); d = parentOf(d)) {
      dirty.add(d);
      const parent = parentOf(d);
      const siblings = children.get(parent);
      if (siblings) siblings.push(d);
      else children.set(parent, [d]);
    }
  }
  const depth = (path: string) => (path === '' ? 0 : path.split('/').length);
  const updates = new Map<string, DirTree | null>();
  let root = '';
  // Deepest first, so each directory sees its subdirectories' new ids.
  for (const dir of [...dirty].sort((a, b) => depth(b) - depth(a))) {
    const entries: Tree = new Map(base.get(dir)?.entries);
    for (const name of names.get(dir) ?? []) {
      const entry = files.get(dir ? `${dir}/${name}` : name);
      const recorded = record(name);
      if (entry) entries.set(recorded, entry);
      else if (entries.get(recorded)?.mode !== TREE_MODE || !dirty.has(dir ? `${dir}/${name}` : name)) entries.delete(recorded);
    }
    for (const child of children.get(dir) ?? []) {
      const name = record(nameOf(child));
      const update = updates.get(child);
      if (update) entries.set(name, { mode: TREE_MODE, oid: update.oid });
      else if (entries.get(name)?.mode === TREE_MODE) entries.delete(name);
    }
    if (entries.size === 0 && dir !== '') {
      updates.set(dir, null);
      continue;
    }
    const tree = makeTree(entries);
    out.push(tree);
    updates.set(dir, { entries, oid: tree.oid });
    if (dir === '') root = tree.oid;
  }
  return { root, dirs: updates };
}
