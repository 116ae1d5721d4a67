// No behaviour of its own: re-exports only.
/**
 * The session: one run's life in one room, between the commands and the rest. Its entry points
 * (start, resume, continue, fork) find the run; driveSession opens its journal, settles the
 * working tree, runs the agent loop through the valve and records how it ended.
 */
export { startRun, resumeRun, continueRun, forkRun, latestRunHere } from './start.js';
export type { StartOptions, ResumeOptions, ContinueOptions, ForkOptions } from './start.js';
export { driveSession, type RunTarget } from './drive.js';
export { SessionHold, type HeldRun, type HeldRequest } from './hold.js';
export { runIdForTask, legacyRunIdForTask, caseFoldedRunIdForTask, normalizeTask, resolveRunId, runsForTask } from '../journal/run-id.js';
export { expandMessage, type MessageExpansion } from './message-expansion.js';
export type { SessionOptions, SessionEvent, RunOutcome, DriftQuestion, OpenedAs, KilledAttempt, McpPlaces } from './types.js';
