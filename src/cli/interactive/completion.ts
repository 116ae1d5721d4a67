// Tab at the session's prompt: a slash command's name at the start of the line (the built-in ones
// and the custom ones), and an `@path` mention's path anywhere in it (the files and folders under
// the current directory, .git left out), as readline's completer answers: the candidates and the
// part of the line they replace.
// Tested in test/cli/turn-keys.test.ts.
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';

/** Where the candidates come from: the slash commands' names (without "/") and the folder `@` paths start from. */
export interface CompletionSource {
  commands: () => readonly string[];
  cwd: string;
}

// The most entries of one folder offered: a huge folder is typed into, not listed.
const MAX_CANDIDATES = 200;

/** readline's completer for `line` (the text before the cursor). */
export function completeLine(line: string, source: CompletionSource): [string[], string] {
  const slash = /^\/(\S*)$/.exec(line);
  if (slash) {
    const names = source
      .commands()
      .filter((name) => name.startsWith(slash[1]!))
      .map((name) => `/${name}`);
    return [[...new Set(names)].sort(), line];
  }
  const mention = /(?:^|\s)@(\S*)$/.exec(line);
  if (mention) return [pathsFor(mention[1]!, source.cwd).map((path) => `@${path}`), `@${mention[1]}`];
  return [[], line];
}

// The entries whose path starts with `typed` (a folder with "/" after it, to go on into).
function pathsFor(typed: string, cwd: string): string[] {
  const cut = typed.lastIndexOf('/') + 1;
  const folder = typed.slice(0, cut);
  const prefix = typed.slice(cut);
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(resolve(cwd, folder || '.'), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.name.startsWith(prefix) && entry.name !== '.git' && (prefix.startsWith('.') || !entry.name.startsWith('.')))
    .slice(0, MAX_CANDIDATES)
    .map((entry) => `${folder}${entry.name}${entry.isDirectory() ? '/' : ''}`)
    .sort();
}
