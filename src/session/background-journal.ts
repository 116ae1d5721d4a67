// What a run's background commands (tools/background-commands.ts) read from its journal: how many
// background starts it records (the next id), and what one an earlier attempt started ran and when
// it stopped with that attempt's savepoint. Read from the branch when asked (a background command is
// rare; a run that starts none reads nothing): the entry files' names say which are run_bash intents,
// and only those are read.
import type { JournalEntry, RunRecord } from '../journal/entry.js';
import { listRunStepFiles, readRunRecord, readStepFiles, type StepFile } from '../journal/reader.js';
import type { JournalStore } from '../journal/store.js';
import type { BackgroundJournal, PastStart } from '../tools/background-commands.js';
import type { RunJournal } from '../valve/run-journal.js';

// At most this many entries are read back, newest first, to find the last one a crashed attempt recorded.
const LAST_STEP_LOOKBACK = 50;

/** The BackgroundJournal of `run` on `store`; `journal` is the run's open journal (its commands' groups are tracked with it). */
export function backgroundJournal(store: JournalStore, run: string, journal: RunJournal): BackgroundJournal {
  return {
    startsRecorded: async () => (await backgroundStarts(store, run)).length,
    pastStart: async (n) => {
      const start = (await backgroundStarts(store, run))[n - 1];
      if (!start) return undefined;
      const record = await readRunRecord(store, run);
      return {
        command: String((start.input as { command?: unknown }).command ?? ''),
        step: start.step,
        ...(await stoppedWhen(store, run, record, start.attempt)),
      };
    },
    track: (pgid, description) => journal.commands.track(pgid, description, true),
    untrack: (pgid) => journal.commands.untrack(pgid),
  };
}

// The intents of the run's background starts, in step order (every run_bash records its intent first).
async function backgroundStarts(store: JournalStore, run: string): Promise<JournalEntry[]> {
  const files = (await listRunStepFiles(store, run)).filter((file) => file.kind === 'run_bash' && file.phase === 'intent');
  if (files.length === 0) return [];
  return (await readStepFiles(store, run, files)).filter(
    (entry) => (entry.input as { run_in_background?: unknown } | undefined)?.run_in_background === true,
  );
}

// When the savepoint process of `attempt` stopped (its background commands with it), and how that is known.
async function stoppedWhen(
  store: JournalStore,
  run: string,
  record: RunRecord | undefined,
  attempt: number,
): Promise<Pick<PastStart, 'stoppedAt' | 'stoppedHow'>> {
  const attempts = record?.attempts ?? [];
  const found = attempts.find((each) => each.number === attempt);
  if (found?.end) return { stoppedAt: found.end.at, stoppedHow: `when that savepoint process ended: the run ${endWords(found.end.how)}` };
  if (found?.interruptedAt) return { stoppedAt: found.interruptedAt, stoppedHow: 'when that savepoint process was stopped (interrupted)' };
  // No end recorded: that process was killed (kill -9, a crash, a power cut). The last step it
  // recorded is the latest time it is known to have lived.
  const next = attempts.filter((each) => each.number > attempt).sort((a, b) => a.number - b.number)[0];
  const files = (await listRunStepFiles(store, run)).filter((file) => next === undefined || file.step < next.firstLiveStep);
  const last = await lastOfAttempt(store, run, files, attempt);
  if (!last) return { stoppedHow: 'that savepoint process was killed (no end was recorded), at a time the journal does not hold' };
  return {
    stoppedAt: last.finishedAt ?? last.startedAt,
    stoppedHow: `that savepoint process was killed (a crash or kill -9: no end was recorded); this is when it recorded its last step, #${last.step}, so it stopped at or soon after that time`,
  };
}

// The newest entry of `attempt` among `files`, read newest first.
async function lastOfAttempt(store: JournalStore, run: string, files: StepFile[], attempt: number): Promise<JournalEntry | undefined> {
  const newest = files.slice(-LAST_STEP_LOOKBACK).reverse();
  for (const file of newest) {
    const [entry] = await readStepFiles(store, run, [file]);
    if (entry?.attempt === attempt) return entry;
    if (entry && entry.attempt < attempt) return undefined;
  }
  return undefined;
}

function endWords(how: NonNullable<RunRecord['attempts'][number]['end']>['how']): string {
  switch (how) {
    case 'finished':
      return 'finished';
    case 'limit':
      return 'stopped at one of its limits';
    case 'interrupted':
      return 'was interrupted';
    case 'failed':
      return 'failed';
  }
}
