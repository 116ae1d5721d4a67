// Project instructions as Claude Code, pi and Codex read them: AGENTS.md (else CLAUDE.md) from the
// user's config folder ($XDG_CONFIG_HOME/savepoint/), the repository root, and each directory
// from the root down to the current one, the more general first. Read when a run is created and
// pinned into its system prompt (so editing a file later changes no existing run, and the next new
// run picks the edit up). Secrets in them are redacted like everything journaled.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { userConfigDir } from '../settings/index.js';
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
}

/** The instructions for a run created at `root`, or undefined when there are none (or every file is empty). */
export function readInstructions(root: string, redact: (text: string) => string = (text) => text, sources: InstructionSources = {}): ProjectInstructions | undefined {
  const found: ProjectInstructions[] = [];
  const add = (dir: string, name: (file: string) => string) => {
    const read = readFolder(dir);
    if (read) found.push({ file: name(read.file), text: read.text });
  };
  if (sources.env) add(userConfigDir(sources.env), (file) => join(userConfigDir(sources.env), file));
  for (const dir of foldersDown(root, sources.cwd)) add(dir, (file) => relative(root, join(dir, file)).split(sep).join('/'));
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

// The first instructions file in `dir` that is a regular file with text in it.
function readFolder(dir: string): ProjectInstructions | undefined {
  for (const file of INSTRUCTION_FILES) {
    const path = join(dir, file);
    let text: string;
    let size = 0;
    try {
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
      const rest = size > 4 * MAX_INSTRUCTION_CHARS ? `its ${size} bytes go on` : `it goes on for ${text.length - MAX_INSTRUCTION_CHARS} more characters`;
      text = `${text.slice(0, MAX_INSTRUCTION_CHARS)}\n\n[${file} is longer: ${rest}, left out of this prompt]`;
    }
    return { file, text };
  }
  return undefined;
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
