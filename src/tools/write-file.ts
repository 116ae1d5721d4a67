// write_file: creates a file or replaces its whole content, making parent directories as needed.
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { formatBytes } from '../format/numbers.js';
import { defineTool, errorMessage, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import { resolveInRepo, toRepoRelative } from './path-utils.js';
import type { Tool } from './types.js';

/** The input of a write_file call. */
export interface WriteFileInput {
  path: string;
  content: string;
}

const description = `Writes a file in the repository: creates it (and any missing parent directories) or replaces its whole content.
- path is relative to the repository root.
- To change part of an existing file, prefer edit_file: it sends only the change and shows a diff. Read an existing file before replacing it.
- Writes content exactly as given; end a text file with a newline.`;

/** The write_file tool over the repository at `root`. */
export function createWriteFileTool(root: string): Tool<WriteFileInput> {
  return defineTool<WriteFileInput>({
    name: 'write_file',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file to write, relative to the repository root.' },
        content: { type: 'string', description: 'The whole new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    describe: (input) => `write_file ${asText(input.path)}`,
    // Creating a file with fixed content can be done twice; overwriting one destroys what was there,
    // so the journal records the intent first.
    isRepeatSafe: ({ path }) => !existsSync(resolveInRepo(root, path)),
    needsApproval: () => true,
    mayChangeFiles: () => true,
    changedPaths: ({ path }) => [toRepoRelative(root, resolveInRepo(root, path))],
    async run({ path, content }) {
      const file = resolveInRepo(root, path);
      const shown = toRepoRelative(root, file);
      const bytes = Buffer.byteLength(content);
      try {
        const before = await stat(file).catch(() => undefined);
        if (before?.isDirectory()) return toolError(`${shown} is a directory; give the path of a file.`);
        const unchanged = before !== undefined && (await readFile(file, 'utf8')) === content;
        if (!before) await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
        const verb = before ? 'Replaced' : 'Created';
        const note = unchanged ? ', same content as before' : before ? `, was ${formatBytes(before.size)}` : '';
        return toolOk(`${verb} ${shown} (${formatBytes(bytes)}${note}).`, `${verb.toLowerCase()}, ${formatBytes(bytes)}`);
      } catch (error) {
        return toolError(errorMessage(error, shown));
      }
    },
  });
}
