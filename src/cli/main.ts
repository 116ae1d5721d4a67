// The command-line entry point: registers one command per file and turns errors into one clear
// paragraph with exit code 1 (2 for bad usage, commander's parse errors included). A stack trace
// only with SAVEPOINT_DEBUG=1. A closed stdout (`| head`) is never an error: see output.ts.
import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { Command, CommanderError } from 'commander';
import { isSavepointError, noFilesLeftCode, TooManyOpenFilesError, UsageError } from '../errors/index.js';
import { liveModelLoaded } from '../model/live-loaded.js';
import { openFileLimit } from '../os/proc.js';
import { showControls } from '../format/text.js';
import { addCommandHelp } from './help.js';
import { endCleanlyAfterHangup } from './terminal/hangup.js';
import { guardOutput, onClosedPipe } from './terminal/output.js';
import { useSavepointUsageErrors } from './usage.js';

const EXAMPLES = `
Examples:
  savepoint                                   an interactive session: a task, then follow-ups (/help)
  savepoint -c                                ...on this worktree's most recent run (-r: choose one)
  savepoint -p "fix the failing test"         the same as savepoint run "fix the failing test"
  savepoint demo                              crash a scripted run at lap 4, resume it, no API key needed
  savepoint run "make the failing test pass"  start (or continue) a run in this repository
  savepoint run --yes "add a --verbose flag"  ...approving every command and edit without asking
  savepoint resume                            continue the most recent unfinished run
  savepoint continue "now add a test"         a follow-up instruction to the most recent run
  git log agent-journal                       the save file: one commit per step, plain git

Kill it anywhere (Ctrl-C, kill -9, a reboot) and run the same command again: finished steps are
handed back from the journal, nothing is redone, and the run goes live at the first unfinished step.
Model access: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL for compatible servers.

Exit codes: 0 done, 1 a failure (one paragraph on stderr), 2 bad usage, 3 stopped at a limit you set
(--max-steps, --max-turns, --max-cost), 130 stopped by Ctrl-C,
141 the reader of a reading command's output closed the pipe (\`savepoint log | head\`), as git exits.
Each command's --help has its own examples and exit codes; \`savepoint session --help\` has the
interactive session's (savepoint with no command): -c, -r, -p, --model, --yes and the slash commands.`;

// The commands whose work is a run: a closed stdout must not stop it (the rest exit at once). The
// demo too, so that its runs end and it removes its temporary repository.
const DRIVING = new Set(['run', 'resume', 'continue', 'demo', 'session']);

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

// Every command, in help order, each loaded only when needed: `savepoint run` then starts without
// the modules of show, log, runs, diff and demo (reports, diffs, HTML), which are most of the CLI.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./commands/run.js')).runCommand(),
  resume: async () => (await import('./commands/resume.js')).resumeCommand(),
  continue: async () => (await import('./commands/continue.js')).continueCommand(),
  fork: async () => (await import('./commands/fork.js')).forkCommand(),
  runs: async () => (await import('./commands/runs.js')).runsCommand(),
  log: async () => (await import('./commands/log.js')).logCommand(),
  show: async () => (await import('./commands/show.js')).showCommand(),
  diff: async () => (await import('./commands/diff.js')).diffCommand(),
  config: async () => (await import('./commands/config.js')).configCommand(),
  session: async () => (await import('./commands/session.js')).sessionCommand(),
  mcp: async () => (await import('./commands/mcp.js')).mcpCommand(),
  demo: async () => (await import('./commands/demo.js')).demoCommand(),
};

// heap.ts, once a command that drives a run has loaded it (beforeCodeCache).
let smallHeap: typeof import('./heap.js') | undefined;

/**
 * Called by bin/savepoint.js as the process ends, before it keeps V8's compiled code of this bundle
 * for the next start: puts back the V8 flags a run set (heap.ts), since V8 refuses code kept under
 * other flags than a process starts with, and says what ran: `live` when a command drove a run and
 * loaded the model's client (its compiled code covers the valve, the tools and the SDK's request),
 * `run` when it drove one without (a scripted model, a replay), `other` otherwise (a reading command).
 */
export function beforeCodeCache(): 'live' | 'run' | 'other' {
  if (smallHeap === undefined) return 'other';
  smallHeap.restoreV8Defaults();
  return liveModelLoaded() ? 'live' : 'run';
}

/** The program with the commands `argv` needs: the one it names, or all of them (help, a typo). */
export async function createProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command('savepoint')
    .description(
      'A coding-agent harness whose progress lives in git: kill it anywhere, run the same command again, and it picks up exactly where it stopped.',
    )
    .version(version(), '-v, --version')
    .addHelpText('after', EXAMPLES)
    .hook('preAction', async (_program, action) => {
      onClosedPipe(DRIVING.has(action.name()) ? 'discard' : 'exit');
      // An hour-long run stays small (heap.ts); loaded only then: perf_hooks and v8 cost the reading commands' start-up.
      if (DRIVING.has(action.name())) (smallHeap = await import('./heap.js')).preferSmallHeap();
    });
  argv = sessionArgv(argv);
  const named = argv[2];
  const wanted =
    named !== undefined && Object.hasOwn(COMMANDS, named) && !argv.includes('--help') && !argv.includes('-h')
      ? [named]
      : Object.keys(COMMANDS);
  // The session is reached without its name (`savepoint`, `savepoint -c`): not in the command list.
  for (const command of await Promise.all(wanted.map((name) => COMMANDS[name]!())))
    program.addCommand(command, command.name() === 'session' ? { hidden: true } : {});
  for (const command of program.commands) addCommandHelp(command); // examples and exit codes: help.ts
  // Subcommands too (`mcp list --bogus`): every parse error is savepoint's usage paragraph, exit 2.
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  for (const command of everyCommand(program)) useSavepointUsageErrors(command);
  return program;
}

/** Runs the CLI with `argv` and sets the process exit code. */
export async function main(argv: string[]): Promise<void> {
  guardOutput();
  endCleanlyAfterHangup(); // a closed terminal window: the process ends as itself, not by Node's abort
  fileLimit = openFileLimit(); // read now: once the descriptors have run out, /proc cannot be opened either
  try {
    await (await createProgram(argv)).parseAsync(sessionArgv(argv));
  } catch (error) {
    process.exitCode = reportError(error);
  }
}

/**
 * The arguments as the commands read them: `savepoint` alone on a terminal, or with options only
 * (`-c`, `-r`, `--yes`, ...), is the interactive session; `-p <task>` is `run <task>`, as in
 * Claude Code, and a first argument with a space in it (a quoted task) is the session's first
 * message. Anything else is left as it is.
 */
export function sessionArgv(argv: readonly string[], terminal?: boolean): string[] {
  const [node = 'node', bin = 'savepoint', ...args] = argv;
  const first = args[0];
  if (first !== undefined && Object.hasOwn(COMMANDS, first)) return [...argv];
  const print = args.findIndex((arg) => arg === '-p' || arg === '--print');
  if (print !== -1) return [node, bin, 'run', ...args.filter((_, i) => i !== print)];
  // Asked of the file descriptors, and only here: reading process.stdin.isTTY makes the stdin
  // stream (its tty or socket, and the modules behind it), 10-60 ms of every command's start.
  if (first === undefined) return (terminal ?? (isatty(0) && isatty(1))) ? [node, bin, 'session'] : [...argv];
  if (first.startsWith('-') && !['-h', '--help', '-v', '--version'].includes(first)) return [node, bin, 'session', ...args];
  // A quoted task (`savepoint "fix the tests"`) opens a session with it as the first message, as
  // `claude "..."` does. One bare word stays a command name, so a typo (`savepoint rnu`) is still
  // "unknown command" with its suggestion rather than a task for the model.
  if (/\s/.test(first.trim())) return [node, bin, 'session', ...args];
  return [...argv];
}

// The limit of open files when the command started (`ulimit -n`), for the message when it runs out.
let fileLimit: number | undefined;

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander printed its own message (or the help / version) already
    return ['commander.helpDisplayed', 'commander.version', 'commander.help', 'commander.executeSubCommandAsync'].includes(error.code)
      ? 0
      : 2;
  }
  const debug = process.env.SAVEPOINT_DEBUG === '1';
  // Out of file descriptors (`ulimit -n 32`), wherever it struck (a spawn of git, a module load):
  // what to do about it, not an internal error.
  const noFiles = error instanceof TooManyOpenFilesError ? undefined : noFilesLeftCode(error);
  if (noFiles) error = new TooManyOpenFilesError(noFiles, fileLimit, error);
  if (isSavepointError(error)) {
    // A message may quote outside text (a name, a server's error body): shown, never obeyed.
    process.stderr.write(`savepoint: ${showControls(error.message)}\n`);
    if (debug) process.stderr.write(`${stackFrames(error)}\n`);
    if (debug && error.cause instanceof Error) process.stderr.write(`caused by ${error.cause.message}\n${stackFrames(error.cause)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `savepoint: unexpected error: ${showControls(message)}\nEvery finished step is kept in the journal. ` +
      `${debug ? '' : 'Set SAVEPOINT_DEBUG=1 to see the stack trace, and please report it.'}\n`,
  );
  if (debug && error instanceof Error) process.stderr.write(`${stackFrames(error)}\n`);
  return 1;
}

// The stack without its first line, which repeats the message already printed.
function stackFrames(error: Error): string {
  const stack = error.stack ?? '';
  const at = stack.indexOf('\n    at ');
  return at === -1 ? stack : `${error.name} (${(error as { code?: string }).code ?? 'no code'})${stack.slice(at)}`;
}
