// Project instructions: AGENTS.md at the repository root, else CLAUDE.md, read when a run is
// created and pinned into its system prompt (so editing the file later changes no existing run,
// and the next new run picks the edit up). Secrets in it are redacted like everything journaled.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ProjectInstructions } from './config.js';

/** The files looked for, in order: the first one that exists is used. */
export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'];

/** The most of an instructions file that goes into the prompt; the rest is cut with a note. */
export const MAX_INSTRUCTION_CHARS = 64 * 1024;

/** The project instructions at `root`, or undefined when there are none (or the file is empty). */
export function readInstructions(root: string, redact: (text: string) => string = (text) => text): ProjectInstructions | undefined {
  for (const file of INSTRUCTION_FILES) {
    const path = join(root, file);
    let text: string;
    try {
      if (!statSync(path).isFile()) continue;
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    if (!text.trim()) return undefined;
    if (text.length > MAX_INSTRUCTION_CHARS) text = `${text.slice(0, MAX_INSTRUCTION_CHARS)}\n\n[${file} goes on for ${text.length - MAX_INSTRUCTION_CHARS} more characters, left out of this prompt]`;
    return { file, text: redact(text) };
  }
  return undefined;
}
