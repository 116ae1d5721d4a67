// `savepoint continue <message...>`: a follow-up instruction to a run.
// Tested in test/cli/continue.test.ts.
import { Command } from 'commander';
import { continueRun } from '../../session/index.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';
import { runOnTerminal } from '../view/terminal-run.js';

/** The `continue` command. */
export function continueCommand(): Command {
  const command = new Command('continue')
    .summary('give a run a follow-up instruction (default: the most recent run of this working tree)')
    .description(
      'Record <message> as a new user turn of the most recent run of this working tree (or --run <id>): its earlier steps replay ' +
        'from the journal, then the model answers the follow-up live. Works on finished runs and on runs ' +
        'stopped at a limit. The identical command after a crash resumes the same follow-up; it is never added twice.',
    )
    .argument('<message...>', 'what the agent should do next, in plain words')
    .option(
      '--run <id>',
      'the run to continue, or a unique prefix of its id (default: the most recent run of this working tree; see "savepoint runs")',
    );
  addDriveOptions(command);
  return command.action(async (words: string[], flags: DriveFlags & { run?: string }) => {
    process.exitCode = await runOnTerminal((session) => continueRun({ ...session, message: words.join(' '), run: flags.run }), flags);
  });
}
