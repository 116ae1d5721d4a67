// `savepoint diff [run]`: what a run changed in total, from the working tree it started from (its
// start checkpoint; the base commit for runs recorded before those existed) to its last checkpoint,
// as `git diff` of the two trees: the person's own uncommitted edits from before the run are not the run's. git itself pages it on a terminal ($GIT_PAGER, $PAGER, less) and
// colours it, as `git diff` does; piped, it is the plain diff.
import { spawnSync } from 'node:child_process';
import { Command } from 'commander';
import { NoCheckpointError } from '../../errors/index.js';
import { loadWholeRun, openJournals } from '../../report/journal-runs.js';

// git's empty tree: the base of a run that started in a repository with no commit.
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The `diff` command. */
export function diffCommand(): Command {
  return new Command('diff')
    .summary('what a run changed in total: the tree it started from against its last checkpoint')
    .description(
      'Show every change a run made to the files, from the working tree it started from to the one its ' +
        'last checkpoint recorded, as git diff of the two trees (paged and coloured on a terminal, like git).',
    )
    .argument('[run]', 'the run id or a unique prefix of it (default: the most recently active run)')
    .option('--stat', 'a diffstat instead of the patch')
    .action(async (id: string | undefined, flags: { stat?: boolean }) => {
      const journals = await openJournals(process.cwd());
      const run = await loadWholeRun(journals, id);
      const t = run.timeline;
      const last = t.steps.filter((s) => s.checkpoint).at(-1);
      const to = last?.checkpoint ?? t.startCheckpoint;
      if (!to) throw new NoCheckpointError(run.id);
      const from = t.startCheckpoint ?? t.baseCommit ?? EMPTY_TREE;
      const result = spawnSync('git', ['diff', ...(flags.stat ? ['--stat'] : []), '--end-of-options', from, to], { cwd: journals.repo.root, stdio: 'inherit' });
      process.exitCode = result.status === 0 ? 0 : 1;
    });
}
