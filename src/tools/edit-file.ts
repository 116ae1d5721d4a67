// edit_file: replaces an exact piece of text in a file and answers with the unified diff, so the
// model (and the journal) sees precisely what changed.
import { readFile, writeFile } from 'node:fs/promises';
import { plural } from '../format/numbers.js';
import { defineTool, errorMessage, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import { resolveInRepo, toRepoRelative } from './path-utils.js';
import type { Tool } from './types.js';

/** The input of an edit_file call. */
export interface EditFileInput {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

const description = `Edits a file by replacing exact text: old_string becomes new_string. Answers with the unified diff of the change.
- Read the file first and copy old_string exactly as it is in the file, with its indentation and line breaks; the line-number prefix read_file shows is not part of the file.
- old_string must occur exactly once, or the edit fails and says how often it occurs: include enough surrounding lines to make it unique, or set replace_all to replace every occurrence (for renaming, say).
- To create a new file, use write_file.`;

/** The edit_file tool over the repository at `root`. */
export function createEditFileTool(root: string): Tool<EditFileInput> {
  return defineTool<EditFileInput>({
    name: 'edit_file',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file to edit, relative to the repository root.' },
        old_string: { type: 'string', description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The text to put in its place (must differ from old_string).' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence of old_string (default false).' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    describe: (input) => `edit_file ${asText(input.path)}`,
    // Run twice, an edit may apply to text the first run produced.
    isRepeatSafe: () => false,
    needsApproval: () => true,
    mayChangeFiles: () => true,
    changedPaths: ({ path }) => [toRepoRelative(root, resolveInRepo(root, path))],
    async run({ path, old_string: oldString, new_string: newString, replace_all: replaceAll = false }) {
      const file = resolveInRepo(root, path);
      const shown = toRepoRelative(root, file);
      const problem = editProblem(oldString, newString);
      if (problem) return toolError(...problem);
      let before: string;
      try {
        before = await readFile(file, 'utf8');
      } catch (error) {
        return toolError(errorMessage(error, shown));
      }
      const edit = applyEdit(before, { path: shown, old_string: oldString, new_string: newString, replace_all: replaceAll });
      if ('error' in edit) return toolError(edit.error, edit.summary);
      const { after, matches } = edit;
      try {
        await writeFile(file, after);
      } catch (error) {
        return toolError(errorMessage(error, shown));
      }
      return toolOk(...(await diffOf(shown, before, after, matches)));
    },
  });
}

// The unified diff (git-style a/ and b/ names) and a summary such as `2 replacements, +3 -1 lines`.
// `diff` is loaded on first use: a run that never edits (and every replay) starts without it.
async function diffOf(shown: string, before: string, after: string, replacements: number): Promise<[string, string]> {
  const { FILE_HEADERS_ONLY, formatPatch, structuredPatch } = await import('diff');
  const patch = structuredPatch(`a/${shown}`, `b/${shown}`, before, after, undefined, undefined, { context: 3 });
  let added = 0;
  let removed = 0;
  for (const line of patch.hunks.flatMap((hunk) => hunk.lines)) {
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return [formatPatch(patch, FILE_HEADERS_ONLY), `${plural(replacements, 'replacement')}, +${added} -${removed} lines`];
}

/** What an edit makes of a file's content: the new content and how many places changed, or why it cannot be made. */
export type EditOutcome = { after: string; matches: number } | { error: string; summary?: string };

// The edit's own input is unusable, whatever the file holds.
function editProblem(oldString: string, newString: string): [string, string?] | undefined {
  if (oldString === '') return ['old_string is empty; give the exact text to replace (use write_file to create a file).'];
  if (oldString === newString) return ['old_string and new_string are the same; there is nothing to change.', 'error: no change'];
  return undefined;
}

/**
 * The edit applied to `before` (the file's content), with no I/O: the tool runs it, and the approval
 * question runs it on the file as it is on disk, so the diff a person approves is the one made.
 */
export function applyEdit(before: string, input: EditFileInput): EditOutcome {
  const { path: shown, old_string: oldString, new_string: newString, replace_all: replaceAll = false } = input;
  const problem = editProblem(oldString, newString);
  if (problem) return { error: problem[0], ...(problem[1] ? { summary: problem[1] } : {}) };
  // split/join rather than String.replace, which would treat `$&` and friends in new_string specially.
  const pieces = before.split(oldString);
  const matches = pieces.length - 1;
  if (matches === 0) {
    return {
      error: `old_string was not found in ${shown}. Read the file again and copy the text exactly, including whitespace and indentation.`,
      summary: 'error: old_string not found',
    };
  }
  if (matches > 1 && !replaceAll) {
    return {
      error: `old_string occurs ${matches} times in ${shown}. Include more surrounding lines so that it matches exactly once, or set replace_all to true to replace all ${matches}.`,
      summary: `error: old_string matches ${matches} times`,
    };
  }
  return { after: pieces.join(newString), matches };
}
