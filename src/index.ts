// No behaviour of its own: re-exports only.
/**
 * savepoint as a library.
 *
 * Two levels, both durable in the same git journal (the orphan branch `agent-journal`):
 *
 * - **The whole agent**, exactly as the CLI runs it: `startRun({ dir, task, model })` finds or
 *   creates the run for the task, replays its finished steps from the journal, settles the working
 *   tree, and goes live at the first step with no recorded result. `resumeRun`, `continueRun`
 *   (a follow-up instruction) and `forkRun` are the other ways in. Events tell you every step.
 *
 *       const outcome = await startRun({ dir: repo, task: 'Fix the failing test', model: 'script:model.json',
 *         onEvent: (e) => e.type === 'recorded' && console.log(`#${e.position} LIVE ${e.description}`) });
 *
 * - **The valve** for anyone's own loop: `openJournal(...)` then `journal.step(kind, input, run)`
 *   hands back the result recorded for that position of the run (replay), or runs the function,
 *   commits its result, and only then returns it.
 *
 *       const journal = await openJournal({ dir: process.cwd(), run: 'fix-login', task: 'Fix login' });
 *       const text = await journal.step('read_file', { path: 'a.txt' }, () => readFile('a.txt', 'utf8'));
 *       journal.close();
 *
 * @packageDocumentation
 */
/** The session: the whole agent run, as the CLI drives it. */
export { startRun, resumeRun, continueRun, forkRun, runIdForTask, SessionHold } from './session/index.js';
export type {
  StartOptions,
  ResumeOptions,
  ContinueOptions,
  ForkOptions,
  SessionOptions,
  SessionEvent,
  RunOutcome,
  DriftQuestion,
  OpenedAs,
  KilledAttempt,
  McpPlaces,
  HeldRun,
  HeldRequest,
  MessageExpansion,
} from './session/index.js';
export { findCustomCommands, type CustomCommand } from './settings/index.js';
export type { ForkResult } from './valve/fork.js';

/** The agent loop and its parts, for a loop of one's own around the same valve. */
export { runAgent, summarizeResponse, USER_STEP_KIND } from './agent/loop.js';
export type { AgentOptions, AgentOutcome, FollowUp } from './agent/loop.js';
export { callTool, DECLINED_RESULT, type Approver, type ToolCallContext } from './agent/tool-call.js';
export { IN_FLIGHT_POLICIES, inFlightAnswer, type InFlightPolicy } from './agent/in-flight.js';
export { SYSTEM_PROMPT } from './agent/system-prompt.js';

/** Models: the Anthropic API or a script. */
export {
  createProvider,
  createScriptedProvider,
  loadScript,
  validateScript,
  DEFAULT_MODEL,
  SCRIPT_PREFIX,
  hasAnthropicCredentials,
} from './model/index.js';
export type {
  ModelProvider,
  ModelRequest,
  ModelResponse,
  Message,
  AssistantBlock,
  UserBlock,
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  ToolSpec,
  Usage,
  CompleteOptions,
  CreateProviderOptions,
  Script,
  ScriptTurn,
  ScriptTool,
  ScriptedProviderOptions,
} from './model/index.js';

/** Tools: the six the model gets, and how to define another. */
export {
  createTools,
  createReadFileTool,
  createWriteFileTool,
  createEditFileTool,
  createRunBashTool,
  createListFilesTool,
  createSearchTool,
  createWebFetchTool,
  defineTool,
  truncateForModel,
  SpareShells,
  type SpareShellOptions,
} from './tools/index.js';
export type { AnyTool, Tool, ToolContext, ToolInputSchema, ToolResult, ToolImage, ToolDefinition } from './tools/index.js';

/** The valve: `openJournal`, then `journal.step(kind, input, run)`. */
export { openJournal } from './valve/open-journal.js';
export type {
  RunJournal,
  OpenJournalOptions,
  JournalHooks,
  StepOptions,
  StepEvent,
  InFlightStep,
  InFlightAnswer,
  Checkpoint,
  Checkpointer,
  StepBatch,
  StepChanges,
} from './valve/run-journal.js';
export type { History, RecordedStep, StepCall } from './valve/history.js';
export { stepKey } from './valve/key.js';

/** Runs read back from the journal (readable with plain git too: `git log agent-journal`). */
export { listRuns, readRun, type RecordedRun } from './journal/read-runs.js';
export type { JournalEntry, RunRecord, RunConfig, EntryUsage } from './journal/entry.js';
export { JOURNAL_REF, stepFilePath, runRecordPath } from './journal/layout.js';

/** `--push` for any loop: `store: { afterAppend: pusher.afterAppend, beforeFence: pusher.settle }`, then `await pusher.flush()` and `pusher.close()`. */
export { JournalPusher, type PusherOptions, type PushEvent, type FlushReport } from './journal/pusher.js';

/**
 * Every error savepoint raises on purpose, each with a stable code, and the types of their data. The
 * helpers that turn a file-system error into one of them (asWriteFailure and its errno lists) and
 * the message builders stay inside.
 */
export {
  SavepointError,
  isSavepointError,
  NotARepositoryError,
  UnsupportedRepositoryError,
  RunLockedError,
  RunLockLostError,
  StepAlreadyRecordedError,
  JournalBusyError,
  JournalMovedError,
  CorruptEntryError,
  ObjectTooLargeError,
  MissingObjectError,
  JournalConflictError,
  RemoteDivergedError,
  PushRejectedError,
  PushFailedError,
  DivergenceError,
  InFlightError,
  UnfinishedBatchError,
  UsageError,
  MissingCredentialsError,
  UnknownRunError,
  NoUnfinishedRunError,
  NoRunsError,
  NoSuchStepError,
  ReportWriteError,
  ApprovalRequiredError,
  DriftError,
  InterruptedError,
  StoppedBySignalError,
  AmbiguousRunError,
  FinishedElsewhereError,
  NoCheckpointError,
  PathOutsideRepositoryError,
  ModelError,
  ScriptError,
  ContextWindowError,
  UnusableSummaryError,
  UnsafeCheckpointError,
  RestoreConflictError,
  SetAsideError,
  WorktreeBusyError,
  GitDirMismatchError,
  GitDiscoveryError,
  NoWorkTreeError,
  RepositoryNotWritableError,
  JournalCheckedOutError,
  RestoreWouldUndoError,
  FilterFailedError,
  UnknownSecretError,
  SandboxUnavailableError,
  DiskFullError,
  JournalWriteRefusedError,
  TooManyOpenFilesError,
  SettingsFileError,
  CustomCommandError,
  MentionRefusedError,
  McpConfigError,
  McpServerStartError,
  McpCallError,
  PushStalledError,
} from './errors/index.js';
export type { RunLockOwner, StepIdentity, FileChange, StopSignal, ModelErrorData, PushStalledData } from './errors/index.js';
