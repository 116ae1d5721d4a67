// savepoint as a library: the durable valve for anyone's agent loop.
//
//   const journal = await openJournal({ dir: process.cwd(), run: 'fix-login', task: 'Fix login' });
//   const text = await journal.step('read_file', { path: 'a.txt' }, () => readFile('a.txt', 'utf8'));
//   journal.close();
//
// Every call to `step` either hands back the result recorded for that position of the run (replay)
// or runs the function, commits its result to the `agent-journal` branch, and then returns it.
export { openJournal, RunJournal } from './durable/run-journal.js';
export type { OpenJournalOptions, StepOptions, StepEvent, InFlightStep, InFlightAnswer } from './durable/run-journal.js';
export { History } from './durable/history.js';
export { canonicalJson, stepKey } from './durable/key.js';
export { JournalStore } from './journal/store.js';
export type { JournalFile, FaultPoint, StoreOptions } from './journal/store.js';
export { readRunEntries, readRunRecord, listRunIds } from './journal/reader.js';
export { findRepository } from './journal/repository.js';
export type { Repository } from './journal/repository.js';
export type { JournalEntry, RunRecord, RunConfig, EntryUsage } from './journal/entry.js';
export { JOURNAL_REF, stepFilePath, runRecordPath } from './journal/layout.js';
export * from './errors/index.js';
