// The end of each command's --help: examples, then its exit codes. Kept in one place (and added
// by main.ts) so the commands' own files stay about parsing options and calling the library.
import type { Command } from 'commander';

const RUNS =
  'Exit codes: 0 finished, 1 a failure (one paragraph on stderr: a model or API error, files that\n' +
  'differ from the journal, another process on the run), 2 bad usage, 3 stopped at a limit you set\n' +
  '(--max-steps, --max-turns, --max-cost; the same command with a higher limit goes on), 130 stopped by\n' +
  'Ctrl-C, SIGTERM or SIGHUP (a live command is stopped and recorded as stopped, with its output so\n' +
  'far; a model call in progress is made again; the same command continues). When stdout is a\n' +
  'closed pipe (`| head`), the run goes on and stops writing to it.';

const READS =
  'Exit codes: 0 shown, 1 a failure (not in a git repository, no such run or step, an unreadable\n' +
  'journal), 2 bad usage, 141 the reader closed the pipe early (`| head`), as git exits.';

// Examples and exit codes of each command, by name.
const HELP: Record<string, { examples: Array<[command: string, what: string]>; note?: string; exitCodes: string }> = {
  run: {
    examples: [
      ['savepoint run "make the failing test pass"', 'start the run for this task, or continue it'],
      ['savepoint run --yes "add a --verbose flag"', 'approve every command and edit without asking'],
      ['savepoint run --fresh "make the failing test pass"', 'a new run for the same task'],
      ['savepoint run --model script:turns.json "demo"', 'a scripted model, no API key'],
      ['savepoint run --max-steps 20 --push origin "fix it"', 'stop after 20 steps; push the journal'],
      ['savepoint run --trust "fix it"', "trust this folder's own settings and .mcp.json (docs/trust.md)"],
    ],
    exitCodes: RUNS,
  },
  resume: {
    examples: [
      ['savepoint resume', 'the most recent unfinished run'],
      ['savepoint resume fix-login-3a4b5c', 'that run: its steps replay, then it goes live'],
      ['savepoint resume fix-login-3a4b5c --restore', 'first put the files back as the journal has them'],
    ],
    exitCodes: RUNS,
  },
  continue: {
    examples: [
      ['savepoint continue "now add a test for it"', 'a follow-up to the most recent run'],
      ['savepoint continue --run fix-login-3a4b5c "also update the docs"', 'a follow-up to that run'],
    ],
    note: 'The identical command after a crash resumes the same follow-up; it is never added twice.',
    exitCodes: RUNS,
  },
  fork: {
    examples: [
      ['savepoint fork fix-login-3a4b5c --at 7', 'keep steps 1-6, do step 7 anew'],
      ['savepoint fork fix-login-3a4b5c --at 7 --run try-b', '...as the run try-b'],
      ['savepoint resume fix-login-3a4b5c-fork-7 --restore', 'then continue the fork'],
    ],
    exitCodes: 'Exit codes: 0 forked, 1 a failure (no such run or step, the new id is taken), 2 bad usage.',
  },
  runs: {
    examples: [
      ['savepoint runs', 'every run, most recently active first'],
      ['savepoint runs --json | jq .', 'the same for scripts'],
    ],
    exitCodes: READS,
  },
  log: {
    examples: [
      ['savepoint log', 'the most recently active run'],
      ['savepoint log fix-login-3a4b5c', 'that run, one line per step'],
      ['savepoint log fix-login-3a4b5c --html t.html', 'a page to open in a browser'],
      ['savepoint log fix-login-3a4b5c --json', 'the timeline for scripts'],
    ],
    exitCodes: READS,
  },
  show: {
    examples: [
      ['savepoint show fix-login-3a4b5c 4', 'step 4 in full, with its diff (paged on a terminal)'],
      ['savepoint show fix-login-3a4b5c 4 --json', 'the same as JSON'],
      ['SAVEPOINT_PAGER=cat savepoint show fix-login-3a4b5c 4', 'without a pager'],
    ],
    note: 'On a terminal, a step longer than the screen goes through $SAVEPOINT_PAGER, else $PAGER, else\n"less" (with LESS=FRX unless set, as git does); "cat" or an empty value turns paging off.',
    exitCodes: READS,
  },
  diff: {
    examples: [
      ['savepoint diff', 'what the most recently active run changed, as a patch (paged on a terminal, like git)'],
      ['savepoint diff fix-login-3a4b5c --stat', 'the same run as a diffstat'],
      ['savepoint diff fix-login-3a4b5c | git apply --check', 'the patch, piped: plain, for other tools'],
    ],
    note: "The diff starts from the working tree the run started from (its start checkpoint), so your own\nuncommitted edits from before the run are not counted as the run's; runs recorded before start\ncheckpoints existed start from their base commit.",
    exitCodes: READS,
  },
  config: {
    examples: [
      ['savepoint config', 'the settings in force here, each with its file'],
      ['savepoint config --json', 'the same for scripts'],
    ],
    exitCodes: 'Exit codes: 0 shown, 1 a settings file that cannot be used (named, with its key).',
  },
  mcp: {
    examples: [
      ['savepoint mcp list', 'each MCP server, whether it starts, and its tools'],
      ['savepoint mcp list --json', 'the same for scripts'],
      ['savepoint mcp approve github', "approve this repository's server github, as configured now"],
    ],
    exitCodes: 'Exit codes: 0 every server started, 1 one did not (or the configuration is invalid), 2 bad usage.',
  },
  demo: {
    examples: [
      ['savepoint demo', 'watch a run killed at lap 4 and resumed'],
      ['savepoint demo --keep', 'keep the temporary repository to look at'],
    ],
    exitCodes: 'Exit codes: 0 the demo ran, 1 it could not (git missing, a step went wrong).',
  },
};

/** The help epilogue of the command `name` (its examples, then its exit codes), or '' if it has none. */
export function helpEpilogue(name: string): string {
  const help = HELP[name];
  if (!help) return '';
  const width = Math.max(...help.examples.map(([command]) => command.length));
  const examples = help.examples.map(([command, what]) => `  ${command.padEnd(width)}   ${what}`);
  return `\nExamples:\n${examples.join('\n')}\n\n${help.note ? `${help.note}\n\n` : ''}${help.exitCodes}\n`;
}

/** Adds `helpEpilogue` to the end of `command`'s --help, and of its subcommands' (`mcp list`: the examples are theirs). */
export function addCommandHelp(command: Command): Command {
  const text = helpEpilogue(command.name());
  if (text) for (const each of [command, ...command.commands]) each.addHelpText('after', text);
  return command;
}
