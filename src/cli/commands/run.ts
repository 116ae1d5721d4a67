// `savepoint run <task...>`: start or continue the run for this task.
// Tested in test/cli/run-options.test.ts.
import { Command } from 'commander';
import { startRun } from '../../session/index.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';
import { runOnTerminal } from '../view/terminal-run.js';

interface RunFlags extends DriveFlags {
  run?: string;
  fresh?: boolean;
}

/** The `run` command. */
export function runCommand(): Command {
  const command = new Command('run')
    .summary('start or continue the run for a task')
    .description(
      'Start the run for <task> in the repository around the current directory, or continue it: ' +
        'the identical command finds the same run, replays its finished steps from the journal ' +
        '(no model call, no command re-run) and goes live at the first step with no recorded result. ' +
        'A finished run replays to its final answer.',
    )
    .argument('<task...>', 'what the agent should do, in plain words')
    .option('--run <id>', 'the run id (default: derived from the task text, so the same command finds the same run)')
    .option('--fresh', 'start a new run even if one exists for this task');
  addDriveOptions(command);
  return command.action(async (words: string[], flags: RunFlags) => {
    process.exitCode = await runOnTerminal(
      (session) => startRun({ ...session, task: words.join(' '), run: flags.run, fresh: flags.fresh }),
      flags,
    );
  });
}
