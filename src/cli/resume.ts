// `savepoint resume [run]`: continue a run by id, or the most recent unfinished one.
import { Command } from 'commander';
import { SavepointError, UnknownRunError } from '../errors/index.js';
import { listRunIds, readRunRecord } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import type { RunRecord } from '../journal/entry.js';
import { DEFAULT_MODEL } from '../model/index.js';
import { driveRun } from './drive.js';
import { addDriveOptions, driveFlags, type DriveFlags } from './options.js';
import { assertNoConflict, syncJournals } from '../journal/sync.js';

// No unfinished run to resume.
export class NoUnfinishedRunError extends SavepointError<Record<string, never>> {
  constructor() {
    super(
      'ENORUN',
      `There is no unfinished run in this repository's agent-journal branch to resume. Start one with "savepoint run <task>"; "savepoint runs" lists every run.`,
      {},
    );
  }
}

export function resumeCommand(): Command {
  const command = new Command('resume')
    .summary('continue a run (default: the most recent unfinished one)')
    .description('Continue the given run, or the most recent unfinished one: finished steps replay from the journal, then it goes live.')
    .argument('[run]', 'the run id (see "savepoint runs")');
  addDriveOptions(command);
  return command.action(async (run: string | undefined, flags: DriveFlags) => {
    const store = await JournalStore.open(process.cwd());
    const synced = await syncJournals(store);
    const record = run ? await readRunRecord(store, run) : await latestUnfinished(store);
    if (!record) throw run ? new UnknownRunError(run) : new NoUnfinishedRunError();
    assertNoConflict(synced, record.id);
    process.exitCode = await driveRun({
      root: store.repo.root,
      run: record.id,
      task: record.task,
      model: flags.model ?? record.model ?? DEFAULT_MODEL,
      ...driveFlags(flags),
    });
  });
}

async function latestUnfinished(store: JournalStore): Promise<RunRecord | undefined> {
  let latest: RunRecord | undefined;
  for (const id of await listRunIds(store)) {
    const record = await readRunRecord(store, id);
    if (record && record.status !== 'finished' && (!latest || record.updatedAt > latest.updatedAt)) latest = record;
  }
  return latest;
}
