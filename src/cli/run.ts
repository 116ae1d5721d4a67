// `savepoint run <task...>`: start or continue the run for this task.
import { Command } from 'commander';
import { UsageError } from '../errors/index.js';
import { openRunSecrets } from '../redact/run-secrets.js';
import { listRunIds, readRunRecord } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import { DEFAULT_MODEL } from '../model/index.js';
import { driveRun } from './drive.js';
import { addDriveOptions, driveFlags, type DriveFlags } from './options.js';
import { assertNoConflict, syncJournals } from '../journal/sync.js';
import { runIdForTask, runsForTask } from './run-id.js';

interface RunFlags extends DriveFlags {
  run?: string;
  fresh?: boolean;
}

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
    // A secret typed into the task must not reach the run id, run.json or commit subjects.
    if (!words.join(' ').trim()) throw new UsageError('Say what the agent should do: savepoint run "fix the failing test".');
    const store = await JournalStore.open(process.cwd());
    const task = openRunSecrets(store.repo.commonDir).redactor.text(words.join(' ').trim());
    const synced = await syncJournals(store);
    const ids = await listRunIds(store);
    let run = flags.run;
    if (run === undefined) {
      const { latest, next } = runsForTask(runIdForTask(task), ids);
      run = flags.fresh ? next : (latest ?? next);
    } else if (flags.fresh && ids.includes(run)) {
      throw new UsageError(`Run ${run} already exists, so --fresh cannot start it anew: drop --run, or give a new id.`);
    }
    assertNoConflict(synced, run);
    const record = ids.includes(run) ? await readRunRecord(store, run) : undefined;
    if (record && record.task !== task) {
      throw new UsageError(`Run ${run} is for the task "${record.task}", not "${task}". Use "savepoint resume ${run}" to continue it, or another --run id.`);
    }
    process.exitCode = await driveRun({
      root: store.repo.root,
      run,
      task,
      model: flags.model ?? record?.model ?? DEFAULT_MODEL,
      ...driveFlags(flags),
    });
  });
}
