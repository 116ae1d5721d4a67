// `savepoint diff [run]`: what a run changed in total, from the working tree it started from (its
// start checkpoint; the base commit for runs recorded before those existed) to its last checkpoint,
// as `git diff` of the two trees: the person's own uncommitted edits from before the run are not the run's.
// The trees may come from a fetched journal, and the files in them are outside text: the diff is
// taken plain, its control characters made visible (showControls), then coloured as git colours it
// and paged on a terminal ($SAVEPOINT_PAGER, $PAGER, less), like `show`; piped, it is the plain diff.
// Tested in test/cli/checkpoints.test.ts and test/cli/reading/reading.test.ts.
import { runSync } from '../../os/processes.js';
import { Command } from 'commander';
import { NoCheckpointError } from '../../errors/index.js';
import { showControls } from '../../format/text.js';
import { buildOwnGit } from '../../git/repository.js';
import { loadWholeRun, openJournals } from '../../report/journal-runs.js';
import { DEFAULT_MAX_FILE_BYTES } from '../../worktree/entries.js';
import { writePaged } from '../terminal/pager.js';
import { styleFor } from '../terminal/style.js';
import { paintDiff } from '../view/step-diff.js';

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
      const style = styleFor(process.stdout);
      const args = [
        '-c',
        `core.bigFileThreshold=${DEFAULT_MAX_FILE_BYTES}`,
        'diff',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        ...(flags.stat ? ['--stat'] : []),
        '--end-of-options',
        from,
        to,
      ];
      const git = buildOwnGit(args);
      const result = runSync('git', git.args, {
        cwd: journals.repo.root,
        env: git.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1024 * 1024 * 1024,
      });
      if (result.status !== 0) {
        const why = showControls(
          String(result.stderr ?? result.error?.message ?? '')
            .trim()
            .split('\n')[0] ?? '',
        );
        process.stderr.write(
          `savepoint: git cannot compare the run's trees (${why || `git diff exited with ${result.status}`}); fetch the journal's objects, or the base commit, first.\n`,
        );
        process.exitCode = 1;
        return;
      }
      await writePaged(paintDiff(showControls(String(result.stdout)), style));
    });
}
