// `savepoint fork <run> --at <step>`: a new run from the steps before <step>, continuing live there.
import { Command } from 'commander';
import { UsageError } from '../errors/index.js';
import { forkRun } from '../session/index.js';
import { styleFor } from './style.js';

/** The `fork` command. */
export function forkCommand(): Command {
  return new Command('fork')
    .summary('start a new run from the steps of another before a given step')
    .description(
      'Create a new run whose first steps are the steps of <run> before --at, with the working tree as it ' +
        'was there and its lineage recorded. "savepoint resume <new-run>" then replays those steps and goes ' +
        'live at --at. The way on after a divergence error, or to try another path from a point in a run.',
    )
    .argument('<run>', 'the run to fork (see "savepoint runs")')
    .requiredOption('--at <step>', 'the first step the new run does anew (it keeps the steps before it)')
    .option('--run <id>', 'the new run id (default: <run>-fork-<step>)')
    .action(async (run: string, flags: { at: string; run?: string }) => {
      const at = Number(flags.at);
      if (!Number.isInteger(at) || at < 1) throw new UsageError(`--at needs a step number (1 or more), not "${flags.at}".`);
      const fork = await forkRun({ from: run, at, run: flags.run });
      const style = styleFor(process.stdout);
      process.stdout.write(
        `Forked ${fork.from} at step ${at} as ${style.cyan(fork.id)}: ${fork.steps} finished step(s) kept` +
          `${fork.checkpoint ? ', with the working tree as it was there' : ''}.\n` +
          `Continue it with: savepoint resume ${fork.id}${fork.checkpoint ? ' --restore' : ''}\n`,
      );
    });
}
