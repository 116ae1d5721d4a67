// `savepoint fork <run> --at <step>`: a new run from the steps before <step>, continuing live there.
import { Command } from 'commander';
import { forkRun } from '../durable/fork.js';
import { UsageError } from '../errors/index.js';
import { listRunIds } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import { styleFor } from './style.js';

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
      const atStep = Number(flags.at);
      if (!Number.isInteger(atStep) || atStep < 1) throw new UsageError(`--at needs a step number (1 or more), not "${flags.at}".`);
      const store = await JournalStore.open(process.cwd());
      const ids = new Set(await listRunIds(store));
      let id = flags.run ?? `${run}-fork-${atStep}`;
      for (let n = 2; !flags.run && ids.has(id); n++) id = `${run}-fork-${atStep}-${n}`;
      const fork = await forkRun(store, run, atStep, id);
      const style = styleFor(process.stdout);
      process.stdout.write(
        `Forked ${run} at step ${atStep} as ${style.cyan(id)}: ${fork.steps} finished step(s) kept` +
          `${fork.checkpoint ? ', with the working tree as it was there' : ''}.\n` +
          `Continue it with: savepoint resume ${id}${fork.checkpoint ? ' --restore' : ''}\n`,
      );
    });
}
