// Project instructions as Claude Code, pi and Codex read them: AGENTS.md (else CLAUDE.md) from the
// user's config folder ($XDG_CONFIG_HOME/savepoint/), the repository root, and each directory
// from the root down to the current one, the more general first. Read when a run is created and
// pinned into its system prompt (so editing a file later changes no existing run, and the next new
// run picks the edit up). Secrets in them are redacted like everything journaled.
// A file is read only where it really is, after symbolic links: inside the repository (never .git,
// the rule read_file follows), or, for the user's own file, inside the user's config folder. An
// `AGENTS.md` that points elsewhere (a clone's symlink to ~/.netrc) would otherwise go into the
// prompt, the journal and every push of it: it is left out, and the person is told.
import { closeSync, openSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { userConfigDir } from '../settings/index.js';
import { resolveInRepo } from '../tools/path-utils.js';
import type { ProjectInstructions } from './config.js';

/** The files looked for in each folder, in order: the first one that exists is used. */
export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'];

/** The most of an instructions file that goes into the prompt; the rest is cut with a note. */
export const MAX_INSTRUCTION_CHARS = 64 * 1024;

/** Where to look besides the repository root: the current directory and the user's config folder. */
export interface InstructionSources {
  /** The current directory (inside the root); each folder from the root down to it is read. Default: the root only. */
  cwd?: string;
  /** The environment that says where the user's config folder is (XDG_CONFIG_HOME, HOME). Without it, no user file. */
  env?: NodeJS.ProcessEnv;
  /** Told of each instructions file left out because it resolves outside the folder it was found in. */
  onLeftOut?: (leftOut: InstructionsLeftOut) => void;
}

/** An instructions file that was not read: after symbolic links it is somewhere else than the folder it was found in. */
export interface InstructionsLeftOut {
  /** The file as the prompt would have named it: relative to the repository root, or absolute for the user's own. */
  file: string;
  /** Where it really is (symbolic links followed). */
  target: string;
  /** The folder it had to stay inside. */
  within: 'repository' | 'config folder';
}

/** The instructions for a run created at `root`, or undefined when there are none (or every file is empty). */
export function readInstructions(
  root: string,
  redact: (text: string) => string = (text) => text,
  sources: InstructionSources = {},
): ProjectInstructions | undefined {
  const found: ProjectInstructions[] = [];
  const add = (
    dir: string,
    name: (file: string) => string,
    place: (path: string) => string | undefined,
    within: InstructionsLeftOut['within'],
  ) => {
    const read = readFolder(dir, place, (file, target) => sources.onLeftOut?.({ file: name(file), target, within }));
    if (read) found.push({ file: name(read.file), text: read.text });
  };
  if (sources.env) {
    const config = userConfigDir(sources.env);
    add(
      config,
      (file) => join(config, file),
      (path) => inFolder(config, path),
      'config folder',
    );
  }
  for (const dir of foldersDown(root, sources.cwd))
    add(
      dir,
      (file) => relative(root, join(dir, file)).split(sep).join('/'),
      (path) => inRepository(root, path),
      'repository',
    );
  if (found.length === 0) return undefined;
  if (found.length === 1) return { file: found[0]!.file, text: redact(found[0]!.text) };
  // Several files: each under its own heading, the more general first, so a nearer one can refine it.
  return { file: found.map((f) => f.file).join(', '), text: redact(found.map((f) => `## ${f.file}\n\n${f.text.trim()}\n`).join('\n')) };
}

// The root, then each folder below it down to `cwd` (only the root when cwd is not inside it).
function foldersDown(root: string, cwd: string | undefined): string[] {
  const folders = [root];
  if (!cwd) return folders;
  const rel = relative(root, resolve(cwd));
  if (!rel || rel.startsWith('..') || resolve(rel) === rel) return folders;
  let dir = root;
  for (const part of rel.split(sep)) {
    if (part === '.git') break; // never git's own folder
    dir = join(dir, part);
    folders.push(dir);
  }
  return folders;
}

// The first instructions file in `dir` that is a regular file with text in it, where `place` says
// it really is (undefined: outside the folder it must stay in; `leftOut` hears of it, and the next
// name is looked for).
function readFolder(
  dir: string,
  place: (path: string) => string | undefined,
  leftOut: (file: string, target: string) => void,
): ProjectInstructions | undefined {
  for (const file of INSTRUCTION_FILES) {
    const found = join(dir, file);
    let text: string;
    let size = 0;
    try {
      // Its real path is what is read from here on, so the check and the read are of one file.
      const path = place(found);
      if (path === undefined) {
        leftOut(file, realpathSync.native(found));
        continue;
      }
      const stat = statSync(path);
      if (!stat.isFile()) continue;
      size = stat.size;
      // Sized before it is read whole: only the head of a huge file is wanted.
      text = stat.size > 4 * MAX_INSTRUCTION_CHARS ? readHead(path) : readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    if (!text.trim()) return undefined;
    if (text.length > MAX_INSTRUCTION_CHARS) {
      const rest =
        size > 4 * MAX_INSTRUCTION_CHARS
          ? `its ${size} bytes go on`
          : `it goes on for ${text.length - MAX_INSTRUCTION_CHARS} more characters`;
      text = `${text.slice(0, MAX_INSTRUCTION_CHARS)}\n\n[${file} is longer: ${rest}, left out of this prompt]`;
    }
    return { file, text };
  }
  return undefined;
}

// Where `path` really is, when that is inside the repository and outside .git (read_file's rule).
function inRepository(root: string, path: string): string | undefined {
  try {
    return resolveInRepo(root, path);
  } catch {
    return undefined;
  }
}

// Where `path` really is, when that is inside `folder` (itself resolved: a symlinked config folder is fine).
function inFolder(folder: string, path: string): string | undefined {
  let real: string;
  let realFolder: string;
  try {
    real = realpathSync.native(path);
    realFolder = realpathSync.native(folder);
  } catch {
    return path; // not there: nothing is read, nothing to tell
  }
  const rel = relative(realFolder, real);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) ? real : undefined;
}

function readHead(path: string): string {
  const buffer = Buffer.alloc(4 * MAX_INSTRUCTION_CHARS);
  const fd = openSync(path, 'r');
  try {
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
