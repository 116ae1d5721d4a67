// The files of a repository that decide what runs: settings (rules, defaultMode, sandbox switches,
// MCP servers, hooks), `.mcp.json`, custom commands, and the instructions that go into every new
// run's system prompt. A repository brings them; the person decides whether they take effect
// (trust). So they are guarded wherever the run itself could change them: read-only inside the
// sandbox as `.git` is, and a tool's write to one asks the person, whatever a rule of the
// repository's own says. Paths here are relative to the repository root, with `/`.

/** Folders at the repository root whose whole content decides what runs: savepoint's and Claude Code's settings, commands and hooks. */
export const CONTROL_FOLDERS: readonly string[] = ['.savepoint', '.claude'];

/** Files at the repository root that decide what runs. */
export const CONTROL_ROOT_FILES: readonly string[] = ['.mcp.json'];

/** Instruction files, in any folder of the repository: read into a new run's system prompt. */
export const INSTRUCTION_FILE_NAMES: readonly string[] = ['AGENTS.md', 'CLAUDE.md'];

/**
 * Whether `relPath` (relative to the repository root, `/`-separated, already normalised and
 * symlink-resolved by the caller) is a file that decides what runs, or a folder holding one.
 * Compared case-insensitively, as on a case-insensitive file system `.MCP.json` is the same file.
 */
export function isControlPath(relPath: string): boolean {
  const parts = relPath
    .replace(/\\/g, '/')
    .split('/')
    .filter((part) => part !== '' && part !== '.');
  if (parts.length === 0) return false;
  const first = parts[0]!.toLowerCase();
  if (CONTROL_FOLDERS.some((folder) => folder.toLowerCase() === first)) return true;
  if (parts.length === 1 && CONTROL_ROOT_FILES.some((file) => file.toLowerCase() === first)) return true;
  const last = parts[parts.length - 1]!.toLowerCase();
  return INSTRUCTION_FILE_NAMES.some((name) => name.toLowerCase() === last);
}
