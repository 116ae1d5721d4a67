// Reflog entries for the refs savepoint moves, written as git writes them
// (`logs/refs/heads/agent-journal`: "<old> <new> <name> <<email>> <unix-ts> <tz>\t<message>\n"), so
// `git reflog agent-journal` lists every append and can bring the branch back after a mistaken
// reset. Like git: only for branches (refs/heads/*), only when core.logAllRefUpdates allows it (on
// by default in a repository with a working tree), and always when the log already exists.
import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
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
    const fd = openLog(path, gitdir);
    if (fd === undefined) return;
    try {
      const when = new Date();
      const line = `${old ?? ZERO} ${next} ${reflogIdentity(gitdir)} ${Math.floor(when.getTime() / 1000)} ${timezone(when)}\t${oneLine(message)}\n`;
      writeSync(fd, line); // one write with O_APPEND: concurrent writers never interleave a line
    } finally {
      closeSync(fd);
    }
  } catch {
    // a read-only logs/ directory, a full disk: the ref itself has moved, which is what counts
  }
}

// The log opened for appending: the one there (the everyday case: one open, nothing else asked), or
// a new one, made only when reflogs are enabled. Undefined when there is none to write.
function openLog(path: string, gitdir: string): number | undefined {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_APPEND);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (!reflogsEnabled(gitdir)) return undefined;
  mkdirSync(dirname(path), { recursive: true });
  return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o666);
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

// "Name <email>" as git would write it: the user's committer identity from the environment, the
// repository's config, then the global ones (~/.gitconfig, $XDG_CONFIG_HOME/git/config), else a
// fallback. Read once per repository and process, without starting git (the first append of a run
// is on the critical path). Config includes are not followed.
function reflogIdentity(gitdir: string): string {
  let identity = identities.get(gitdir);
  if (identity === undefined) {
    const home = homedir();
    const configs = [readGitConfig(gitdir), readGitConfig(home, '.gitconfig'), readGitConfig(join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'git'))];
    const pick = (env: string | undefined, key: string) => env || configs.map((c) => c.get(key)).find((v) => v);
    const name = pick(process.env.GIT_COMMITTER_NAME, 'user.name');
    const email = pick(process.env.GIT_COMMITTER_EMAIL, 'user.email') || process.env.EMAIL; // git's order
    identity = name && email ? `${clean(name)} <${clean(email)}>` : FALLBACK_IDENTITY;
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

// A config value as written (quotes around it dropped), with nothing that would break the line.
function clean(value: string): string {
  return value.replace(/^"(.*)"$/, '$1').replace(/[<>\n]/g, '').trim();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
