// Every journal a repository can read: its own `refs/heads/agent-journal` and the remote-tracking
// copies `refs/remotes/<remote>/agent-journal` that `git fetch` brings in, from loose ref files and
// from packed-refs alike. Reading only: nothing here moves a ref.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_REF } from './layout.js';
import { readPackedRefs, readRef } from '../git/refs.js';

const BRANCH = 'agent-journal';
const REMOTE_JOURNAL = /^refs\/remotes\/(.+)\/agent-journal$/;

/** One journal ref and where it comes from. */
export interface JournalRef {
  /** The full ref name, e.g. `refs/remotes/origin/agent-journal`. */
  ref: string;
  /** `local` for the repository's own branch, else the remote's name (`origin`). */
  source: string;
  local: boolean;
  /** The commit the ref points at. */
  tip: string;
}

/** The local journal first (when it exists), then each remote-tracking journal sorted by remote. */
export function listJournalRefs(commonDir: string): JournalRef[] {
  const found: JournalRef[] = [];
  const localTip = readRef(commonDir, JOURNAL_REF);
  if (localTip) found.push({ ref: JOURNAL_REF, source: 'local', local: true, tip: localTip });
  const remotes = new Set<string>([...looseRemoteJournals(commonDir)]);
  for (const ref of readPackedRefs(commonDir).keys()) if (REMOTE_JOURNAL.test(ref)) remotes.add(ref);
  for (const ref of [...remotes].sort()) {
    const tip = safeReadRef(commonDir, ref);
    if (tip) found.push({ ref, source: REMOTE_JOURNAL.exec(ref)![1]!, local: false, tip });
  }
  return found;
}

// `refs/remotes/**/agent-journal` as loose files (remote names may contain slashes).
function looseRemoteJournals(commonDir: string): string[] {
  const refs: string[] = [];
  const walk = (relative: string, depth: number) => {
    if (depth > 8) return;
    let names: string[];
    try {
      names = readdirSync(join(commonDir, relative));
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.') || name.endsWith('.lock')) continue;
      const path = `${relative}/${name}`;
      let isDir = false;
      try {
        isDir = statSync(join(commonDir, path)).isDirectory();
      } catch {
        continue;
      }
      if (isDir) walk(path, depth + 1);
      else if (name === BRANCH && depth > 0) refs.push(path);
    }
  };
  walk('refs/remotes', 0);
  return refs;
}

// A ref being rewritten by git right now may be unreadable for an instant: skip it, never fail.
function safeReadRef(commonDir: string, ref: string): string | undefined {
  try {
    return readRef(commonDir, ref);
  } catch {
    return undefined;
  }
}
