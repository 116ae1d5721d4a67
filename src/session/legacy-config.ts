// What savepoint 0.1.0 sent, frozen here for runs it recorded before run.json pinned a run's
// configuration: the past is read-only, so such a run replays with the words it was given, not
// with this build's. Only what has changed since is kept: the system prompt, the tool input
// schemas and max tokens are the same; run_bash's and read_file's descriptions differ, and so does
// the note in a cut output (RunConfig.outputNote 'journal', in tools/truncate.ts).
// Tested in test/session/config.test.ts.

/** run_bash's description as savepoint 0.1.0 gave it to the model. */
export const LEGACY_RUN_BASH_DESCRIPTION =
  "Runs a command with bash in the repository root and returns its exit code and its output (stdout and stderr together, in the order they were written).\n- Runs with the user's environment; stdin is empty, so a command that waits for input gets end-of-file instead of hanging. Each call starts a fresh shell: cd and variables do not carry over.\n- Times out after 120 s by default (set timeout_ms for longer builds or test runs). On timeout the command and every process it started are killed.\n- Background processes (`cmd &`) are killed when the command ends, so do not start servers that must keep running.\n- Prefer read_file, list_files, search, edit_file and write_file over cat, find, grep, sed and echo > file: they are checked and shown more clearly.\n- Quote paths that contain spaces. Keep output small where you can (for example, `| tail -50`).";

/** read_file's description as savepoint 0.1.0 gave it to the model (before reads were capped at 50 KB each). */
export const LEGACY_READ_FILE_DESCRIPTION =
  'Reads a file from the repository and returns its text with line numbers, as `cat -n` prints them (the number, a tab, then the line).\n- path is relative to the repository root (an absolute path inside the repository works too).\n- Reads up to 2000 lines from the start by default. For a longer file, read on with offset (the 1-based line number to start at) and limit (how many lines).\n- Read a file before editing it: edit_file needs its exact text. The line-number prefix is not part of the file.\n- Use list_files to list a directory and search to find text across files.';

/** The tools savepoint 0.1.0 gave the model, in its order: a tool added since is never shown to a run it recorded. */
export const LEGACY_TOOL_NAMES: readonly string[] = ['read_file', 'write_file', 'edit_file', 'run_bash', 'list_files', 'search'];

/** Input properties added since savepoint 0.1.0, by tool: left out of the schemas such a run is shown. */
export const LEGACY_ADDED_PROPERTIES: Readonly<Record<string, readonly string[]>> = { run_bash: ['run_in_background'] };
