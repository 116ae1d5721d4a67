// `savepoint` with no command: the interactive session (src/cli/interactive/). Hidden from the
// command list because it is reached without its name: `savepoint`, `savepoint -c`, `savepoint -r`,
// `savepoint "fix the tests"` (a quoted task: the session's first message, as `claude "..."` opens).
// Tested in test/cli/main.test.ts.
import { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { runInteractive } from '../interactive/session.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';

/** The session command (main.ts routes `savepoint [session options]` to it). */
export function sessionCommand(): Command {
  const command = new Command('session')
    .summary('an interactive session (what plain "savepoint" opens on a terminal)')
    .description(
      "Open a prompt: the first message is a new run's task, every later one a follow-up of the same run, in this process. " +
        'Ctrl-C stops the step in progress and comes back to the prompt; Ctrl-C at an empty prompt, Ctrl-D or /exit leave. ' +
        'What was typed and not sent when the session ends (a signal, /exit with lines typed ahead) is kept in .git/savepoint/unsent/; the next session here brings it back with the up arrow. ' +
        '/help lists the slash commands.',
    )
    .argument('[message...]', "the first message (a new run's task, or with -c / -r a follow-up), sent as if typed at the prompt")
    .option('-c, --continue', "open this worktree's most recent run (its steps replay first)")
    .option('-r, --resume [run]', 'open a chosen run (a picker when no id is given)')
    // run's two own options, as the SPEC has run's flags apply to the session.
    .option('--run <id>', 'the id of the run the first message starts (the run with this id, when it is for that task, goes on)')
    .option('--fresh', "accepted as run takes it: a session's first message always starts a new run");
  addDriveOptions(command);
  return command.action(
    async (words: string[], flags: DriveFlags & { continue?: boolean; resume?: string | true; run?: string; fresh?: boolean }) => {
      const message = words.join(' ').trim();
      if (flags.run !== undefined && (flags.continue || flags.resume !== undefined))
        throw new UsageError('--run names the run a new session starts; to open an existing run, give -r <run> alone.');
      process.exitCode = await runInteractive(flags, {
        continueLatest: Boolean(flags.continue),
        ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
        ...(message ? { message } : {}),
        ...(flags.run !== undefined ? { run: flags.run } : {}),
      });
    },
  );
}
