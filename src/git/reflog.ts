// Reflog entries for the refs savepoint moves, written as git writes them
// (`logs/refs/heads/agent-journal`: "<old> <new> <name> <<email>> <unix-ts> <tz>\t<message>\n"), so
// `git reflog agent-journal` can bring the branch back after a move that lost commits. Like git:
// only for branches (refs/heads/*), only when core.logAllRefUpdates allows it (on by default in a
// repository with a working tree), and always when the log already exists.
//
// What is kept, and why (docs/crash-safety.md#the-reflog): an append moves the branch from its tip
// to a commit whose first parent is that tip, so every value the branch had through appends is an
// ancestor of the one it has; a line per append would record nothing the branch does not hold
// (and was a fifth of a journal's bytes). So a store writes a line for every move that is not such
// an append (the branch created, put back under a live run, moved to a fetched journal), for its
// first append and the first after any such move, and then for one append in APPENDS_PER_LINE, so
// that a ref file put back by something that is not git (a restored backup of .git/refs) loses at
// most that many appends to `git reflog`. Moves git makes (a reset, `git branch -f`) git logs itself.
import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { readGitConfig } from './repository.js';

const ZERO = '0'.repeat(40);

/** A store logs one append in this many (besides the first, and every move that is not an append). */
export const APPENDS_PER_LINE = 256;
const FALLBACK_IDENTITY = 'savepoint <savepoint@localhost>';

/**
 * The reflog of one repository's refs, as the journal store that moves them holds it (one per
 * store, so one per run): what it reads once (the identity, whether reflogs are on) it keeps for
 * that store's life instead of in a module-level cache of the process.
 */
export class Reflog {
  private identity: string | undefined;
  private enabled: boolean | undefined;
  // Per ref: the appends left unlogged since the last line this store wrote (none yet: the next is logged).
  private readonly unlogged = new Map<string, number>();

  /** The reflog of the refs under `gitdir` (the common git dir). */
  constructor(readonly gitdir: string) {}

  /**
   * Notes `ref` moving from `old` (undefined: created) to `next`. Called with the ref lock held, as
   * git does, so entries are in the order the ref moved. `onTip`: the move is an append, `next` a
   * commit whose first parent is `old`; such a move is written only when due (see the top of this
   * file). Best effort: a reflog that cannot be written never fails an append (git's own rule for
   * reflog trouble is to warn).
   */
  append(ref: string, old: string | undefined, next: string, message: string, onTip = false): void {
    if (!ref.startsWith('refs/heads/')) return;
    const unlogged = this.unlogged.get(ref);
    if (onTip && old !== undefined && unlogged !== undefined && unlogged + 1 < APPENDS_PER_LINE) {
      this.unlogged.set(ref, unlogged + 1);
      return;
    }
    // After a move that is not an append, the next append is logged too: where the run went on from.
    if (onTip) this.unlogged.set(ref, 0);
    else this.unlogged.delete(ref);
    const path = join(this.gitdir, 'logs', ref);
    try {
      const fd = this.openLog(path);
      if (fd === undefined) return;
      try {
        const when = new Date();
        const who = (this.identity ??= reflogIdentity(this.gitdir));
        const line = `${old ?? ZERO} ${next} ${who} ${Math.floor(when.getTime() / 1000)} ${timezone(when)}\t${oneLine(message)}\n`;
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
  const configs = [
    readGitConfig(gitdir),
    readGitConfig(home, '.gitconfig'),
    readGitConfig(join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'git')),
  ];
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
  return value
    .replace(/^"(.*)"$/, '$1')
    .replace(/[<>\n]/g, '')
    .trim();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
