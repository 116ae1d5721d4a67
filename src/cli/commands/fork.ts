// `savepoint fork <run> --at <step>`: a new run from the steps before <step>, continuing live there.
// With --message, the new run goes on at once with that instruction as a follow-up (a user step at
// <step>), driven like `savepoint continue`.
// Tested in test/cli/fork.test.ts and test/cli/main.test.ts.
import { Command } from 'commander';
import { UsageError } from '../../errors/index.js';
import { continueRun, forkRun } from '../../session/index.js';
import { addDriveOptions, type DriveFlags } from '../view/drive-flags.js';
import { styleFor } from '../terminal/style.js';
import { runOnTerminal } from '../view/terminal-run.js';

/** The `fork` command. */
export function forkCommand(): Command {
  const command = new Command('fork')
    .summary('start a new run from the steps of another before a given step')
    .description(
      'Create a new run whose first steps are the steps of <run> before --at, with the working tree as it ' +
        'was there and its lineage recorded. "savepoint resume <new-run>" then replays those steps and goes ' +
        'live at --at. The way on after a divergence error, or to try another path from a point in a run. ' +
        'With --message, the new run goes on at once, the message its instruction at --at (the drive options apply).',
    )
    .argument('<run>', 'the run to fork, or a unique prefix of its id (see "savepoint runs")')
    .requiredOption('--at <step>', 'the first step the new run does anew (it keeps the steps before it)')
    .option('--run <id>', 'the new run id (default: <run>-fork-<step>)')
    .option('-m, --message <text>', 'an instruction for the new run at --at: it goes on at once, like "savepoint continue"');
  addDriveOptions(command);
  return command.action(async (run: string, flags: DriveFlags & { at: string; run?: string; message?: string }) => {
    const at = Number(flags.at);
    if (!Number.isInteger(at) || at < 1) throw new UsageError(`--at needs a step number (1 or more), not "${flags.at}".`);
    if (flags.message !== undefined && !flags.message.trim())
      throw new UsageError('--message needs the instruction for the new run: --message "try it without a cache".');
    const fork = await forkRun({ from: run, at, run: flags.run });
    const out = flags.json ? process.stderr : process.stdout;
    const style = styleFor(out);
    // Its first live step puts back the files the parent wrote from there on (saving them first, under
    // a ref it names): the fork goes on from the parent's files at that step, with no question.
    out.write(
      `Forked ${fork.from} at step ${at} as ${style.cyan(fork.id)}: ${fork.steps} finished step(s) kept` +
        `${fork.checkpoint ? `, with the working tree as it was there. It goes on from ${fork.from}'s files at that step: the files ${fork.from} wrote later are put back then (and saved first)` : ''}.\n` +
        (flags.message === undefined ? `Continue it with: savepoint resume ${fork.id}\n` : ''),
    );
    if (flags.message === undefined) return;
    process.exitCode = await runOnTerminal((session) => continueRun({ ...session, run: fork.id, message: flags.message! }), flags);
  });
}
