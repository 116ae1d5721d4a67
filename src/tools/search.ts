// search: lines matching a regular expression across the project's files, via git grep, which
// searches the same set list_files shows (tracked plus untracked-not-ignored) and skips binaries.
import { statSync } from 'node:fs';
import { plural } from '../format/numbers.js';
import { cutAfter } from '../format/text.js';
import { defineTool, errorMessage, READS_AT_ONCE, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import { pathspecFor, runGit } from './git-files.js';
import { resolveInRepo, specialFileKind } from './path-utils.js';
import type { Tool } from './types.js';

/** Matches returned at most; the model should narrow its search beyond this. */
export const MAX_SEARCH_MATCHES = 500;
// Characters kept of one matching line (a minified file is one very long line).
const MAX_LINE_CHARS = 500;

/** The input of a search call. */
export interface SearchInput {
  pattern: string;
  path?: string;
}

const description = `Searches file contents in the repository for a regular expression and returns the matching lines as \`file:line: text\`, sorted by file and line.
- pattern is a POSIX extended regular expression, matched per line and case-sensitively (as grep -E: use [0-9] rather than \\d, and escape ( ) { } . + ? | to match them literally).
- path limits the search to a directory or file (default: the whole repository).
- Searches tracked files and untracked files that are not ignored; binary files are skipped. At most ${MAX_SEARCH_MATCHES} matches are shown.`;

/** The search tool over the repository at `root`. */
export function createSearchTool(root: string): Tool<SearchInput> {
  return defineTool<SearchInput>({
    name: 'search',
    maxConcurrent: READS_AT_ONCE, // a read: beside the other reads of its answer
    description,
    inputSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'The regular expression to search for (POSIX extended, like grep -E).' },
        path: {
          type: 'string',
          description: 'The directory or file to search in, relative to the repository root. Default: the whole repository.',
        },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    describe: (input) => {
      const path = asText(input.path);
      return `search "${asText(input.pattern)}"${path && path !== '.' ? ` in ${path}` : ''}`;
    },
    async run({ pattern, path }) {
      if (pattern === '') return toolError('The pattern is empty; give a regular expression to search for.');
      let target;
      try {
        target = pathspecFor(root, path ?? undefined);
      } catch (error) {
        return toolError(errorMessage(error, path));
      }
      // git grep skips a FIFO or a device silently; named as the path, it gets a clear answer instead of "no matches".
      const special = target.shown === '.' ? undefined : specialFileKind(statSync(resolveInRepo(root, path!)));
      if (special)
        return toolError(
          `${target.shown} is ${special}, not a regular file or a directory; search reads regular files only.`,
          `error: ${special}`,
        );
      const args = ['grep', '-z', '-n', '-I', '--untracked', '--no-color', '--no-column', '-E', '-e', pattern, ...target.pathspec];
      let stdout: string;
      try {
        // git grep exits 1 when nothing matched: an answer, not an error.
        ({ stdout } = await runGit(root, args, [0, 1]));
      } catch (error) {
        return toolError(`${errorMessage(error)}\nThe pattern is a POSIX extended regular expression (as grep -E).`);
      }
      return toolOk(...formatMatches(stdout, target.shown));
    },
  });
}

// `file:line: text` lines from git grep -z -n output (`file\0line\0text\n`), capped, with a summary.
function formatMatches(stdout: string, shown: string): [string, string] {
  const matches = stdout
    .split('\n')
    .filter(Boolean)
    .map((record) => {
      const [file = '', line = '0', ...rest] = record.split('\0');
      const text = rest.join('\0');
      return { file, line: Number(line), text: cutAfter(text, MAX_LINE_CHARS) };
    })
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  if (!matches.length) return [`no matches${shown === '.' ? '' : ` in ${shown}`}`, 'no matches'];
  const files = new Set(matches.map((match) => match.file)).size;
  const summary = `${plural(matches.length, 'match', 'matches')} in ${plural(files, 'file')}`;
  const lines = matches.slice(0, MAX_SEARCH_MATCHES).map((match) => `${match.file}:${match.line}: ${match.text}`);
  if (matches.length > MAX_SEARCH_MATCHES) {
    lines.push(
      `[${MAX_SEARCH_MATCHES} of ${plural(matches.length, 'match', 'matches')} shown; narrow the pattern or the path to see the rest]`,
    );
  }
  return [lines.join('\n'), summary];
}
