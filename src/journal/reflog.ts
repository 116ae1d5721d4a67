// Reflog entries for the refs savepoint moves, written as git writes them
// (`logs/refs/heads/agent-journal`: "<old> <new> <name> <<email>> <unix-ts> <tz>\t<message>\n"), so
// `git reflog agent-journal` lists every append and can bring the branch back after a mistaken
// reset. Like git: only for branches (refs/heads/*), only when core.logAllRefUpdates allows it (on
// by default in a repository with a working tree), and always when the log already exists.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readGitConfig } from './repository.js';

const ZERO = '0'.repeat(40);
const FALLBACK_IDENTITY = 'savepoint <savepoint@localhost>';

const identities = new Map<string, string>();
const enabledByDir = new Map<string, boolean>();

/**
 * Appends one entry for `ref` moving from `old` (undefined: created) to `next`. Called with the ref
 * lock held, as git does, so entries are in the order the ref moved. Best effort: a reflog that
 * cannot be written never fails an append (git's own rule for reflog trouble is to warn).
 */
export function appendReflog(gitdir: string, ref: string, old: string | undefined, next: string, message: string): void {
  if (!ref.startsWith('refs/heads/')) return;
  const path = join(gitdir, 'logs', ref);
  try {
    if (!existsSync(path) && !reflogsEnabled(gitdir)) return;
    mkdirSync(dirname(path), { recursive: true });
    const when = new Date();
    const line = `${old ?? ZERO} ${next} ${reflogIdentity(gitdir)} ${Math.floor(when.getTime() / 1000)} ${timezone(when)}\t${oneLine(message)}\n`;
    appendFileSync(path, line); // one write with O_APPEND: concurrent writers never interleave a line
  } catch {
    // a read-only logs/ directory, a full disk: the ref itself has moved, which is what counts
  }
}

// core.logAllRefUpdates, default true unless the repository is bare (git's rule).
function reflogsEnabled(gitdir: string): boolean {
  let enabled = enabledByDir.get(gitdir);
  if (enabled === undefined) {
    const config = readGitConfig(gitdir);
    const setting = config.get('core.logallrefupdates')?.toLowerCase();
    const bare = config.get('core.bare')?.toLowerCase() === 'true';
    enabled = setting === undefined ? !bare : ['true', 'yes', 'on', '1', 'always'].includes(setting);
    enabledByDir.set(gitdir, enabled);
  }
  return enabled;
}

// "Name <email>" as git would write it: the user's committer identity (environment or config, as
// `git var` resolves it), else a fallback. Asked once per process.
function reflogIdentity(gitdir: string): string {
  let identity = identities.get(gitdir);
  if (identity === undefined) {
    const result = spawnSync('git', [`--git-dir=${gitdir}`, 'var', 'GIT_COMMITTER_IDENT'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const match = result.status === 0 ? /^(.*<[^<>\n]*>)/.exec(result.stdout.trim()) : null;
    identity = match ? match[1]!.trim() : FALLBACK_IDENTITY;
    identities.set(gitdir, identity);
  }
  return identity;
}

// "+0100", "-0530": the local zone, as git writes it.
function timezone(when: Date): string {
  const offset = -when.getTimezoneOffset();
  const abs = Math.abs(offset);
  return `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
