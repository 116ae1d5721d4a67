// Finds the git repository around a directory, the way git does, and refuses the ones the journal
// cannot write safely. isomorphic-git ignores `commondir`, so the journal is always handed the
// common git dir: in a linked worktree that is the main repository's .git, where branches live.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { NotARepositoryError, UnsupportedRepositoryError } from '../errors/index.js';

// Where a repository's parts are: its working tree, this worktree's git dir, the shared git dir.
export interface Repository {
  // Top of the working tree the agent works in (the directory holding `.git`).
  root: string;
  // This worktree's own git dir (HEAD, index); differs from commonDir in a linked worktree.
  gitdir: string;
  // The git dir that holds objects and refs: where `agent-journal` lives.
  commonDir: string;
}

// Finds the repository that contains `dir`, walking up like git does.
export function findRepository(dir: string): Repository {
  const start = resolve(dir);
  for (let current = start; ; current = dirname(current)) {
    const dotGit = join(current, '.git');
    const gitdir = gitdirAt(dotGit);
    if (gitdir) {
      const commonDir = commonDirOf(gitdir);
      assertSupported(commonDir);
      return { root: current, gitdir, commonDir };
    }
    if (dirname(current) === current) throw new NotARepositoryError(start);
  }
}

// `.git` is a directory, or (worktrees, submodules) a file saying `gitdir: <path>`.
function gitdirAt(dotGit: string): string | undefined {
  let stat;
  try {
    stat = statSync(dotGit);
  } catch {
    return undefined;
  }
  if (stat.isDirectory()) return existsSync(join(dotGit, 'HEAD')) ? dotGit : undefined;
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
  if (!match) return undefined;
  const target = match[1]!;
  return isAbsolute(target) ? target : resolve(dirname(dotGit), target);
}

function commonDirOf(gitdir: string): string {
  const file = join(gitdir, 'commondir');
  if (!existsSync(file)) return gitdir;
  const target = readFileSync(file, 'utf8').trim();
  return isAbsolute(target) ? target : resolve(gitdir, target);
}

// SHA-256 object stores and reftable ref stores would be silently corrupted by isomorphic-git and
// by our own ref writer, so they are refused up front.
function assertSupported(commonDir: string): void {
  const config = readGitConfig(commonDir);
  const objectFormat = config.get('extensions.objectformat');
  if (objectFormat && objectFormat.toLowerCase() !== 'sha1') {
    throw new UnsupportedRepositoryError(commonDir, `${objectFormat.toUpperCase()} object names`);
  }
  const refStorage = config.get('extensions.refstorage');
  if (refStorage && refStorage.toLowerCase() !== 'files') {
    throw new UnsupportedRepositoryError(commonDir, `the "${refStorage}" ref storage format`);
  }
  if (existsSync(join(commonDir, 'reftable'))) {
    throw new UnsupportedRepositoryError(commonDir, 'the "reftable" ref storage format');
  }
}

// A small reader for the keys we need (`section.key`, lower-cased); subsections are ignored.
// `file` names another config file in `gitdir` (`.gitconfig` in a home directory).
export function readGitConfig(gitdir: string, file = 'config'): Map<string, string> {
  const values = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(join(gitdir, file), 'utf8');
  } catch {
    return values;
  }
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]$/.exec(line);
    if (header) {
      section = /"/.test(line) ? '' : header[1]!.toLowerCase();
      continue;
    }
    const pair = /^([A-Za-z0-9-]+)\s*(?:=\s*(.*))?$/.exec(line);
    if (pair && section) values.set(`${section}.${pair[1]!.toLowerCase()}`, (pair[2] ?? 'true').trim());
  }
  return values;
}
