// Reading what git prints about a working tree: the index (`git ls-files --stage -z`) and where the
// working tree differs from it (`git status --porcelain=v2 -z`).
import { resolve } from 'node:path';
import type { FileEntry } from './entries.js';

/** The mode of a submodule's entry in git's index (a gitlink: the commit it is checked out at). */
export const GITLINK_MODE = '160000';

/** The `git status` a checkpoint runs, before its untracked and pathspec arguments. */
export const STATUS_ARGS = ['status', '--porcelain=v2', '-z', '--no-renames', '--ignore-submodules=all'];

/** A path `git status` names: its file is to be hashed again, or is gone. */
export interface PathChange {
  path: string;
  state: 'changed' | 'deleted';
}

// What the mode and the id of an index entry must be (compiled once: a literal in the loop below is a
// new RegExp object per record, which cost a cold process a quarter of the parse).
const INDEX_MODE = /^\d{6}$/;
const OBJECT_ID = /^[0-9a-f]{40}$/;

/** The stage-0 entries of `git ls-files --stage -z` (path -> mode, blob), and the submodules' paths. */
export function parseIndexListing(out: string): { entries: Map<string, FileEntry>; gitlinks: string[] } {
  const entries = new Map<string, FileEntry>();
  const gitlinks: string[] = [];
  // Each record is "<mode> <40 hex> <stage>\t<path>": read by position, one slice per field (a
  // regular expression per record cost a tenth of a fresh clone's first checkpoint).
  for (let at = 0; at < out.length;) {
    let end = out.indexOf('\0', at);
    if (end < 0) end = out.length;
    if (
      end - at > 51 &&
      out.charCodeAt(at + 6) === 32 &&
      out.charCodeAt(at + 47) === 32 &&
      out.charCodeAt(at + 49) === 9 &&
      out.charCodeAt(at + 48) === 48
    ) {
      const mode = out.slice(at, at + 6);
      const oid = out.slice(at + 7, at + 47);
      if (INDEX_MODE.test(mode) && OBJECT_ID.test(oid)) {
        const path = out.slice(at + 50, end);
        entries.set(path, { mode, oid });
        if (mode === GITLINK_MODE) gitlinks.push(path);
      }
    }
    at = end + 1;
  }
  return { entries, gitlinks };
}

/**
 * Paths whose working-tree file differs from the index, and unmerged ones; the untracked ones (a
 * nested repository as `dir/`); the ignored paths (with `--ignored=matching`: a directory as `dir/`);
 * and (with `--branch`) the commit HEAD names.
 */
export function parseStatus(out: string): { changes: PathChange[]; untracked: string[]; ignored: Set<string>; head?: string } {
  const changes: PathChange[] = [];
  const untracked: string[] = [];
  const ignored = new Set<string>();
  let head: string | undefined;
  for (const record of out.split('\0')) {
    if (record.startsWith('# branch.oid '))
      head = /^# branch\.oid ([0-9a-f]{40})$/.exec(record)?.[1]; // with --branch; "(initial)": none
    else if (record.startsWith('! ')) ignored.add(record.slice(2));
    else if (record.startsWith('? ')) untracked.push(record.slice(2));
    else if (record.startsWith('1 ')) {
      const fields = record.split(' ');
      const [staged, worktree] = [fields[1]![0], fields[1]![1]];
      const path = fields.slice(8).join(' ');
      if (worktree === 'D') changes.push({ path, state: 'deleted' });
      // A staged file (`git add` after the last commit, by the agent too) is hashed from the
      // working tree like a modified one: its index blob was never redacted, and taking it as
      // is would put a secret written and staged by a command into the journal.
      else if (worktree !== '.' || staged !== '.') changes.push({ path, state: 'changed' });
    } else if (record.startsWith('u ')) {
      changes.push({ path: record.split(' ').slice(10).join(' '), state: 'changed' });
    }
  }
  return { changes, untracked, ignored, ...(head ? { head } : {}) };
}

/** The ignore and attributes files the configuration names (core.excludesFile, core.attributesFile), absolute. */
export function configuredFiles(repo: { root: string; git(args: string[]): string }): { excludesFile?: string; attributesFile?: string } {
  let out = '';
  try {
    out = repo.git(['config', '--path', '--get-regexp', '^core\\.(excludesfile|attributesfile)$']);
  } catch {
    // neither is set (git exits 1)
  }
  const named = (key: string) => {
    const file = new RegExp(`^core\\.${key} (.+)$`, 'm').exec(out)?.[1];
    return file ? resolve(repo.root, file) : undefined;
  };
  return { excludesFile: named('excludesfile'), attributesFile: named('attributesfile') };
}
