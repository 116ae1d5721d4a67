// `savepoint resume [run]`: continue a run by id, or the most recent unfinished one.
// Tested in test/cli/fenced-resume.test.ts and test/cli/hand-edits.test.ts.
import { Command } from 'commander';
import { resumeRun } from '../../session/index.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';
import { runOnTerminal } from '../view/terminal-run.js';

/** The `resume` command. */
export function resumeCommand(): Command {
  const command = new Command('resume')
    .summary('continue a run (default: the most recent unfinished one)')
    .description('Continue the given run, or the most recent unfinished one: finished steps replay from the journal, then it goes live.')
    .argument('[run]', 'the run id (see "savepoint runs")');
  addDriveOptions(command);
  return command.action(async (run: string | undefined, flags: DriveFlags) => {
    process.exitCode = await runOnTerminal((session) => resumeRun({ ...session, run }), flags);
  });
}
