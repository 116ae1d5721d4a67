// list_files: the files under a path that git would consider part of the project (tracked, or
// untracked and not ignored), so build output and node_modules stay out of the model's way.
import { plural } from '../format/numbers.js';
import { defineTool, errorMessage, READS_AT_ONCE, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import { pathspecFor, runGit } from './git-files.js';
import type { Tool } from './types.js';

/** The input of a list_files call. */
export interface ListFilesInput {
  path?: string;
}

const description = `Lists the files in the repository under a directory (default: the whole repository), one path per line relative to the repository root, sorted.
- Lists tracked files and untracked files that are not ignored; files matched by .gitignore (build output, dependencies) are left out, and so is .git.
- Use search to find files by their content, and read_file to read one.`;

/** The list_files tool over the repository at `root`. */
export function createListFilesTool(root: string): Tool<ListFilesInput> {
  return defineTool<ListFilesInput>({
    name: 'list_files',
    maxConcurrent: READS_AT_ONCE, // a read: beside the other reads of its answer
    description,
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'The directory (or file) to list, relative to the repository root. Default: the whole repository.',
        },
      },
      additionalProperties: false,
    },
    describe: (input) => `list_files ${asText(input.path) || '.'}`,
    async run({ path }) {
      let target;
      try {
        target = pathspecFor(root, path ?? undefined);
      } catch (error) {
        return toolError(errorMessage(error, path));
      }
      const { pathspec, shown } = target;
      const listed = await runGit(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z', ...pathspec]);
      // Tracked files deleted from the working tree are still in the index; they are not files now.
      const deleted = await runGit(root, ['ls-files', '--deleted', '-z', ...pathspec]);
      const gone = new Set(splitZ(deleted.stdout));
      // A file in a merge conflict is listed once per stage: dedupe.
      const files = [...new Set(splitZ(listed.stdout))].filter((file) => !gone.has(file)).sort();
      if (!files.length) return toolOk(`(no files under ${shown})`, 'no files');
      return toolOk(files.join('\n'), plural(files.length, 'file'));
    },
  });
}

function splitZ(text: string): string[] {
  return text.split('\0').filter(Boolean);
}
