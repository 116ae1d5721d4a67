// Where a path a tool was given really points. Every tool resolves its paths here, so the rule is in
// one place: inside the repository root after symbolic links are followed, and never into .git.
import { lstatSync, readFileSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PathOutsideRepositoryError } from '../errors/index.js';

// Symbolic links followed for one path before giving up, like the kernel's own limit.
const MAX_LINKS = 40;

/**
 * The absolute, symlink-free path of `path` (relative to `root`, or absolute), checked to lie inside
 * the repository and outside .git. The file need not exist yet: its deepest existing ancestor is
 * resolved, so a new file under a symlinked directory that points out is refused as well.
 */
export function resolveInRepo(root: string, path: string): string {
  if (typeof path !== 'string' || path.trim() === '') {
    throw new PathOutsideRepositoryError(String(path), root, 'is not a usable path (empty)');
  }
  if (path.includes('\0')) throw new PathOutsideRepositoryError(path, root, 'contains a NUL byte');
  const realRoot = realpathSync.native(root);
  const real = realpathDeep(resolve(realRoot, path), 0);
  const rel = relative(realRoot, real);
  if (!isWithin(realRoot, real)) throw new PathOutsideRepositoryError(path, realRoot);
  // Case-insensitive, as git itself treats `.GIT` on case-insensitive file systems.
  if (rel.split(sep).some((part) => part.toLowerCase() === '.git')) {
    throw new PathOutsideRepositoryError(path, realRoot, 'is inside .git, which is off limits');
  }
  for (const gitdir of gitDirsInside(realRoot)) {
    if (isWithin(gitdir, real))
      throw new PathOutsideRepositoryError(path, realRoot, "is inside the repository's git directory, which is off limits");
  }
  return real;
}

/** The path as the model should see it: relative to the repository root, with `/`, `.` for the root. */
export function toRepoRelative(root: string, absolute: string): string {
  const rel = relative(realpathSync.native(root), absolute);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

// True when `path` is `dir` itself or below it (both absolute and symlink-free).
function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

// realpath for a path that may not exist: the deepest existing ancestor is resolved and the missing
// rest appended. A dangling symlink on the way is followed by hand, since writing through it would
// create its target, wherever that is.
function realpathDeep(path: string, links: number): string {
  try {
    return realpathSync.native(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = realpathDeep(parent, links);
  if (isSymlink(path)) {
    if (links >= MAX_LINKS) throw new PathOutsideRepositoryError(path, realParent, 'has too many levels of symbolic links');
    return realpathDeep(resolve(realParent, readlinkSync(path)), links + 1);
  }
  return join(realParent, basename(path));
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

// The git directory (and the common one of a linked worktree) when `.git` is a file pointing at a
// directory that lives inside the working tree, as `git init --separate-git-dir` can arrange.
function gitDirsInside(realRoot: string): string[] {
  const pointer = readGitdirPointer(join(realRoot, '.git'));
  if (!pointer) return [];
  const gitdir = realpathDeep(resolve(realRoot, pointer), 0);
  const dirs = [gitdir];
  try {
    const common = readFileSync(join(gitdir, 'commondir'), 'utf8').trim();
    if (common) dirs.push(realpathDeep(resolve(gitdir, common), 0));
  } catch {
    // Not a linked worktree: no common dir.
  }
  return dirs.filter((dir) => isWithin(realRoot, dir));
}

// The `gitdir: <path>` a `.git` file holds, or undefined when `.git` is a directory or absent.
function readGitdirPointer(dotGit: string): string | undefined {
  try {
    if (!lstatSync(dotGit).isFile()) return undefined;
    return /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * What a file is when it is not a regular file ("a FIFO (named pipe)", "a character device", ...),
 * or undefined for a regular file or a directory. Reading a FIFO waits for a writer that may never
 * come, and a device may never end or may act on being read, so the reading tools refuse them.
 */
export function specialFileKind(stats: Stats): string | undefined {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return stats.isFile() || stats.isDirectory() ? undefined : 'not a regular file';
}
