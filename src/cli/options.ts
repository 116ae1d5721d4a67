// Options shared by the commands that drive a run (`run`, `resume`, `continue`).
import { Option, type Command } from 'commander';
import { IN_FLIGHT_POLICIES, type InFlightPolicy } from '../agent/in-flight.js';
import { UsageError } from '../errors/index.js';

/** The flags of a command that drives a run, as commander parses them. */
export interface DriveFlags {
  model?: string;
  yes?: boolean;
  maxSteps?: number;
  inFlight: InFlightPolicy;
  restore?: boolean;
  keepWorktree?: boolean;
  push?: string;
  // Commander's --no-sandbox: false when given.
  sandbox?: boolean;
  allowNetwork?: boolean;
  allowGitWrites?: boolean;
  json?: boolean;
}

/** Adds the options of a command that drives a run (`run`, `resume`, `continue`). */
export function addDriveOptions(command: Command): Command {
  return command
    .option('--model <name>', 'an Anthropic model id, or script:<file> for a scripted model (default: the run\'s model, else claude-sonnet-5-5)')
    .option('-y, --yes', 'approve every tool call without asking')
    .option('--max-steps <n>', 'stop after this many steps (model calls and tool calls); run again with a higher limit to go on', parsePositiveInt)
    .addOption(
      new Option('--in-flight <policy>', 'a command started before a crash and never recorded: report it to the model as unknown, rerun it, or fail')
        .choices(IN_FLIGHT_POLICIES as string[])
        .default('report'),
    )
    .option('--restore', 'if the files differ from the journal\'s last checkpoint, put them back as recorded')
    .option('--keep-worktree', 'if the files differ from the journal\'s last checkpoint, go on with them as they are')
    .option('--json', 'print JSON Lines on stdout, one object per event (see README, "--json events"); messages for people go to stderr')
    .option('--push <remote>', 'push the agent-journal branch to this remote after every step (stops if another machine moved the run on)')
    .option('--no-sandbox', 'run commands unconfined, with your whole environment and file system (default: in bubblewrap where the machine has it)')
    .option('--allow-network', 'let commands in the sandbox reach the network')
    .option('--allow-git-writes', 'let commands in the sandbox write .git (commit, branch, tag); the journal branch is then unprotected');
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--max-steps needs a whole number above 0, not "${value}".`);
  return n;
}
