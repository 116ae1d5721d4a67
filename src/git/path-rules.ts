// Git's own rules for the names a tree may put in a working tree (read-cache.c's verify_path and
// verify_dotfile, path.c's is_ntfs_dotgit, utf8.c's is_hfs_dotgit, fsck's modes), as pure code:
// a checkpoint fetched from another machine is input, not trust, and is checked against these
// before a single file of it is written. No I/O here: the caller reads the trees.
import { pathFromBytes } from '../os/path-bytes.js';

/** A tree entry as stored, with its name still in bytes (names need not be UTF-8 in git). */
export interface RawTreeEntry {
  mode: string;
  name: Buffer;
  oid: string;
}

/** Why a path breaks git's rules: the rule's short name and a sentence for a person. */
export interface PathViolation {
  rule: string;
  reason: string;
}

/** The modes git writes into trees: file, executable, symbolic link, directory, submodule. */
export const ALLOWED_MODES: ReadonlySet<string> = new Set(['100644', '100755', '120000', '40000', '160000']);

/** The mode of a subtree, as git writes it. */
export const DIR_MODE = '40000';
/** The mode of a symbolic link. */
export const LINK_MODE = '120000';
/** The mode of a submodule (a gitlink): its own repository, never written by a restore. */
export const GITLINK_MODE = '160000';

/** Splits a tree object's body into its entries, in order, duplicates kept; throws on a torn body. */
export function parseRawTree(body: Buffer): RawTreeEntry[] {
  const entries: RawTreeEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(32, at);
    const nul = space < 0 ? -1 : body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) throw new Error('the tree object is truncated or malformed');
    entries.push({
      mode: body.subarray(at, space).toString('latin1'),
      name: body.subarray(space + 1, nul),
      oid: body.subarray(nul + 1, nul + 21).toString('hex'),
    });
    at = nul + 21;
  }
  return entries;
}

/** The entry's mode breaks git's rules (fsck's badFilemode / zeroPaddedFilemode), or undefined. */
export function modeViolation(mode: string): PathViolation | undefined {
  if (ALLOWED_MODES.has(mode)) return undefined;
  return { rule: 'mode', reason: `has mode ${JSON.stringify(mode)}, which is not one git writes (100644, 100755, 120000, 40000, 160000)` };
}

/** The one name (a path component, `name` in bytes) breaks git's rules, or undefined. */
export function nameViolation(name: Buffer, mode: string): PathViolation | undefined {
  if (name.length === 0) return { rule: 'empty', reason: 'has an empty name' };
  if (name.includes(0x2f)) return { rule: 'slash', reason: 'has a "/" inside one name (a tree entry is one component)' };
  // Git allows any bytes but NUL and '/' in a name; one that is not UTF-8 is kept as its bytes
  // (os/path-bytes.ts), and its escapes match none of the names below.
  return componentViolation(pathFromBytes(name), mode);
}

/**
 * The one path component `name` breaks git's rules, or undefined: `.` and `..`; `.git` in any case,
 * with the trailing dots, spaces or `:stream` NTFS ignores, as the short name `git~1`, or with the
 * code points HFS+ ignores; and `.gitmodules` (and its NTFS and HFS spellings) as a symbolic link.
 * A backslash separates components on Windows, so each backslash-separated piece is checked too.
 */
export function componentViolation(name: string, mode: string): PathViolation | undefined {
  if (name === '') return { rule: 'empty', reason: 'has an empty path component' };
  if (name === '.' || name === '..') return { rule: 'dot', reason: `has a "${name}" component, which would leave its directory` };
  for (const piece of name.split('\\')) {
    if (piece === '..' || piece === '.')
      return { rule: 'backslash', reason: `has a "${piece}" between backslashes, a separator on Windows` };
    if (isNtfsDotGit(piece) || isHfsDot(piece, 'git'))
      return {
        rule: 'dotgit',
        reason: 'names .git (or a spelling of it some file system folds to .git), where git keeps its hooks and config',
      };
    if (mode === LINK_MODE && (isNtfsDotGeneric(piece, 'gitmodules', 'gi7eba') || isHfsDot(piece, 'gitmodules'))) {
      return { rule: 'gitmodules-link', reason: 'is .gitmodules as a symbolic link, which git refuses' };
    }
  }
  return undefined;
}

// The files git reads out of a tree, with the stems of their NTFS short names (path.c's is_ntfs_dot*).
const READ_BY_GIT: ReadonlyArray<[string, string]> = [
  ['gitmodules', 'gi7eba'],
  ['gitattributes', 'gi7d29'],
  ['gitignore', 'gi250a'],
  ['mailmap', 'maba30'],
];

/**
 * Which of the files git reads out of a tree (`.gitmodules`, `.gitattributes`, `.gitignore`,
 * `.mailmap`) the one path component `name` is to git, in any spelling NTFS or HFS+ fold to it
 * (`.GITMODULES`, `.gitmodules .`, `GITMOD~1`, `.git\u200cmodules`), or undefined. git fsck checks
 * such a file by what it is to git, not by how it is spelled.
 */
export function gitReadFile(name: string): string | undefined {
  for (const [dotName, shortPrefix] of READ_BY_GIT)
    if (isNtfsDotGeneric(name, dotName, shortPrefix) || isHfsDot(name, dotName)) return `.${dotName}`;
  return undefined;
}

/** The slash-separated `path` (with `mode`) breaks git's rules, or undefined: no absolute or empty names. */
export function pathViolation(path: string, mode: string): PathViolation | undefined {
  if (path.startsWith('/')) return { rule: 'absolute', reason: 'is an absolute path' };
  const names = path.split('/');
  for (let i = 0; i < names.length; i++) {
    const found = componentViolation(names[i]!, i === names.length - 1 ? mode : DIR_MODE);
    if (found) return found;
  }
  return modeViolation(mode);
}

/**
 * The first path of `paths` (file paths of one checkpoint, with their modes) that lies beneath a
 * symbolic link or a file of the same list, or that a symbolic link makes ambiguous: writing it
 * would follow the link out of the working tree.
 */
export function beneathNonDirectory(paths: ReadonlyMap<string, string>): { path: string; violation: PathViolation } | undefined {
  for (const path of paths.keys()) {
    for (let slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1)) {
      const parentMode = paths.get(path.slice(0, slash));
      if (parentMode === undefined) continue;
      const what = parentMode === LINK_MODE ? 'a symbolic link' : parentMode === GITLINK_MODE ? 'a submodule' : 'a file';
      return {
        path,
        violation: { rule: 'beneath-symlink', reason: `lies beneath ${path.slice(0, slash)}, which the same checkpoint makes ${what}` },
      };
    }
  }
  return undefined;
}

// path.c's is_ntfs_dotgit: `.git` or `git~1`, then only spaces and periods up to the end or a `:`.
function isNtfsDotGit(name: string): boolean {
  const lower = name.toLowerCase();
  let rest: string;
  if (lower.startsWith('.git')) rest = name.slice(4);
  else if (lower.startsWith('git~1')) rest = name.slice(5);
  else return false;
  return onlySpacesAndPeriods(rest);
}

// path.c's is_ntfs_dot_generic, for `.gitmodules`: the name, its 6-letter short name with ~1..~4,
// or the fall-back short name (`gi7eba~<digits>`), then only spaces and periods.
function isNtfsDotGeneric(name: string, dotName: string, shortPrefix: string): boolean {
  const lower = name.toLowerCase();
  if (lower.startsWith(`.${dotName}`)) return onlySpacesAndPeriods(name.slice(dotName.length + 1));
  if (lower.startsWith(dotName.slice(0, 6)) && name[6] === '~' && name[7]! >= '1' && name[7]! <= '4')
    return onlySpacesAndPeriods(name.slice(8));
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = name[i];
    if (c === undefined) return false;
    if (sawTilde) {
      if (c < '0' || c > '9') return false;
    } else if (c === '~') {
      i++;
      if (!(name[i]! >= '1' && name[i]! <= '9')) return false;
      sawTilde = true;
    } else if (i >= 6 || c.charCodeAt(0) > 0x7f || c.toLowerCase() !== shortPrefix[i]) return false;
  }
  return onlySpacesAndPeriods(name.slice(8));
}

function onlySpacesAndPeriods(rest: string): boolean {
  for (const c of rest) {
    if (c === ':') return true;
    if (c !== ' ' && c !== '.') return false;
  }
  return true;
}

// Code points HFS+ ignores in names (utf8.c's next_hfs_char).
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

// utf8.c's is_hfs_dot_generic: `.<needle>` in any case once the ignored code points are dropped.
function isHfsDot(name: string, needle: string): boolean {
  return name.replace(HFS_IGNORED, '').toLowerCase() === `.${needle}`;
}
