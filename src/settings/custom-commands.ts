// Custom slash commands, as Claude Code keeps them: one markdown file per command, `<name>.md`,
// whose text is the prompt `/name` sends. Three folders hold them, looked at in this order (the
// first that has a name wins): the repository's `.savepoint/commands/`, the repository's
// `.claude/commands/` (Claude Code's folder, so a project's commands work in both), and the
// person's own `$XDG_CONFIG_HOME/savepoint/commands/`. A repository's commands decide what the
// model is told to do, so they are in force only in a trusted folder (repository-files.ts digests
// these folders with the settings); an untrusted folder's are listed as such, never expanded.
// Optional front matter (`---` lines) gives `description` and `argument-hint`; in the text,
// `$ARGUMENTS` is what follows the name, `$1` .. `$9` its words.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CustomCommandError } from '../errors/index.js';
import { userConfigDir } from './config-dir.js';
import { COMMAND_FOLDERS } from './repository-files.js';

/** The largest command file read (a prompt, not a document). */
export const MAX_COMMAND_BYTES = 256 * 1024;

// A command's name as it is typed after "/": the file's name without `.md`.
const COMMAND_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

/** Where a command comes from: the repository's savepoint folder, its Claude Code folder, or the person's own. */
export type CommandSource = 'project' | 'claude' | 'user';

/** One custom command, found on disk. */
export interface CustomCommand {
  name: string;
  /** The file that holds it (absolute). */
  file: string;
  source: CommandSource;
  /** The front matter's `description`, else the first line of its text. */
  description: string;
  /** The front matter's `argument-hint` (`<file> [focus]`), if any. */
  argumentHint?: string;
  /** The repository's command in a folder that is not trusted: listed, never used. */
  untrusted?: boolean;
}

/** The custom commands found for a repository (`root`) and the person, the first of each name only. */
export function findCustomCommands(root: string | undefined, trusted: boolean, env: NodeJS.ProcessEnv = process.env): CustomCommand[] {
  const folders: Array<{ dir: string; source: CommandSource }> = [
    ...(root
      ? COMMAND_FOLDERS.map((folder) => ({
          dir: join(root, folder),
          source: (folder.startsWith('.claude') ? 'claude' : 'project') as CommandSource,
        }))
      : []),
    { dir: join(userConfigDir(env), 'commands'), source: 'user' },
  ];
  const found = new Map<string, CustomCommand>();
  for (const { dir, source } of folders) {
    for (const name of commandNames(dir)) {
      if (found.has(name)) continue;
      const file = join(dir, `${name}.md`);
      const untrusted = source !== 'user' && !trusted;
      // An untrusted file is not read: its name is all that is said of it. One that cannot be read
      // is listed with why; using it says so in full.
      let head: ReturnType<typeof readCommandFile> | undefined;
      let problem: string | undefined;
      try {
        head = untrusted ? undefined : readCommandFile(file, name);
      } catch (error) {
        problem = error instanceof CustomCommandError ? `(${error.data.problem})` : '(cannot be read)';
      }
      found.set(name, {
        name,
        file,
        source,
        description: problem ?? (head ? describe(head) : ''),
        ...(head?.hint ? { argumentHint: head.hint } : {}),
        ...(untrusted ? { untrusted: true } : {}),
      });
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The command `/name` names among `commands`, or undefined. */
export function customCommand(commands: readonly CustomCommand[], name: string): CustomCommand | undefined {
  return commands.find((command) => command.name === name);
}

/**
 * The prompt `/name args` sends: the command's text (front matter left out) with `$ARGUMENTS`
 * replaced by `args` and `$1` .. `$9` by its words; a command that uses neither gets the arguments
 * after its text (`ARGUMENTS: ...`), as Claude Code does, so they are never lost.
 */
export function expandCustomCommand(command: CustomCommand, args: string): string {
  if (command.untrusted)
    throw new CustomCommandError(
      command.name,
      command.file,
      'is a command of this repository, which is not trusted: run with --trust, or answer yes to the trust question on a terminal (docs/trust.md)',
    );
  const { body } = readCommandFile(command.file, command.name);
  const words = args.trim() ? args.trim().split(/\s+/) : [];
  const uses = /\$ARGUMENTS|\$[1-9]/.test(body);
  const text = body.replace(/\$ARGUMENTS|\$([1-9])/g, (_match, digit: string | undefined) =>
    digit ? (words[Number(digit) - 1] ?? '') : args.trim(),
  );
  return (!uses && args.trim() ? `${text.trimEnd()}\n\nARGUMENTS: ${args.trim()}` : text).trim();
}

// The names of the `<name>.md` files directly in `dir` (a missing folder has none).
function commandNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((file) => file.endsWith('.md') && COMMAND_NAME.test(file.slice(0, -3)))
    .map((file) => file.slice(0, -3))
    .sort();
}

// A command file's front matter and text; a file that cannot be read, or is too long, is named in a CustomCommandError.
function readCommandFile(file: string, name: string): { body: string; description?: string; hint?: string } {
  let text: string;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new CustomCommandError(name, file, 'is not a regular file');
    if (stat.size > MAX_COMMAND_BYTES)
      throw new CustomCommandError(name, file, `is ${stat.size} bytes, more than the ${MAX_COMMAND_BYTES} a command may have`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CustomCommandError) throw error;
    throw new CustomCommandError(name, file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseFrontMatter(text.replace(/^\uFEFF/, ''));
}

/** A command file's text split into its front matter's `description` and `argument-hint` and the rest (its body). */
export function parseFrontMatter(text: string): { body: string; description?: string; hint?: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { body: text };
  const fields = new Map<string, string>();
  for (const line of match[1]!.split(/\r?\n/)) {
    const field = /^([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)$/.exec(line);
    if (field) fields.set(field[1]!.toLowerCase(), unquote(field[2]!.trim()));
  }
  const description = fields.get('description');
  const hint = fields.get('argument-hint');
  return { body: text.slice(match[0].length), ...(description ? { description } : {}), ...(hint ? { hint } : {}) };
}

// A YAML scalar written in quotes, without them.
function unquote(value: string): string {
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}

// What /help says of a command: its description, else its text's first line.
function describe(head: { body: string; description?: string }): string {
  if (head.description) return head.description;
  const first =
    head.body
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? '';
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}
