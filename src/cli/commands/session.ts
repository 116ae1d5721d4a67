// `savepoint` with no command: the interactive session (src/cli/interactive/). Hidden from the
// command list because it is reached without its name: `savepoint`, `savepoint -c`, `savepoint -r`,
// `savepoint "fix the tests"` (a quoted task: the session's first message, as `claude "..."` opens).
import { Command } from 'commander';
import { runInteractive } from '../interactive/session.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';

/** The session command (main.ts routes `savepoint [session options]` to it). */
export function sessionCommand(): Command {
  const command = new Command('session')
    .summary('an interactive session (what plain "savepoint" opens on a terminal)')
    .description(
      'Open a prompt: the first message is a new run\'s task, every later one a follow-up of the same run, in this process. ' +
        'Ctrl-C stops the step in progress and comes back to the prompt; Ctrl-C at an empty prompt, Ctrl-D or /exit leave. /help lists the slash commands.',
    )
    .argument('[message...]', 'the first message (a new run\'s task, or with -c / -r a follow-up), sent as if typed at the prompt')
    .option('-c, --continue', "open this worktree's most recent run (its steps replay first)")
    .option('-r, --resume [run]', 'open a chosen run (a picker when no id is given)');
  addDriveOptions(command);
  return command.action(async (words: string[], flags: DriveFlags & { continue?: boolean; resume?: string | true }) => {
    const message = words.join(' ').trim();
    process.exitCode = await runInteractive(flags, { continueLatest: Boolean(flags.continue), ...(flags.resume !== undefined ? { resume: flags.resume } : {}), ...(message ? { message } : {}) });
  });
}
