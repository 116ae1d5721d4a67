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

/**
 * The reflog of one repository's refs, as the journal store that moves them holds it (one per
 * store, so one per run): what it reads once (the identity, whether reflogs are on) it keeps for
 * that store's life instead of in a module-level cache of the process.
 */
export class Reflog {
  private identity: string | undefined;
  private enabled: boolean | undefined;

  /** The reflog of the refs under `gitdir` (the common git dir). */
  constructor(readonly gitdir: string) {}

  /**
   * Appends one entry for `ref` moving from `old` (undefined: created) to `next`. Called with the ref
   * lock held, as git does, so entries are in the order the ref moved. Best effort: a reflog that
   * cannot be written never fails an append (git's own rule for reflog trouble is to warn).
   */
  append(ref: string, old: string | undefined, next: string, message: string): void {
    if (!ref.startsWith('refs/heads/')) return;
    const path = join(this.gitdir, 'logs', ref);
    try {
      const fd = this.openLog(path);
      if (fd === undefined) return;
      try {
        const when = new Date();
        const line = `${old ?? ZERO} ${next} ${this.identity ??= reflogIdentity(this.gitdir)} ${Math.floor(when.getTime() / 1000)} ${timezone(when)}\t${oneLine(message)}\n`;
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
  private openLog(path: string): number | undefined {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_APPEND);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (!(this.enabled ??= reflogsEnabled(this.gitdir))) return undefined;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o666);
  }
}

// core.logAllRefUpdates, default true unless the repository is bare (git's rule).
function reflogsEnabled(gitdir: string): boolean {
  const config = readGitConfig(gitdir);
  const setting = config.get('core.logallrefupdates')?.toLowerCase();
  const bare = config.get('core.bare')?.toLowerCase() === 'true';
  return setting === undefined ? !bare : ['true', 'yes', 'on', '1', 'always'].includes(setting);
}

// "Name <email>" as git would write it: the user's committer identity from the environment, the
// repository's config, then the global ones (~/.gitconfig, $XDG_CONFIG_HOME/git/config), else a
// fallback. Read once per store, without starting git (the first append of a run is on the
// critical path). Config includes are not followed.
function reflogIdentity(gitdir: string): string {
  const home = homedir();
  const configs = [readGitConfig(gitdir), readGitConfig(home, '.gitconfig'), readGitConfig(join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'git'))];
  const pick = (env: string | undefined, key: string) => env || configs.map((c) => c.get(key)).find((v) => v);
  const name = pick(process.env.GIT_COMMITTER_NAME, 'user.name');
  const email = pick(process.env.GIT_COMMITTER_EMAIL, 'user.email') || process.env.EMAIL; // git's order
  return name && email ? `${clean(name)} <${clean(email)}>` : FALLBACK_IDENTITY;
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
