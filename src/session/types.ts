// What a caller gives a session and what it hears back. A session never writes to a terminal: the
// CLI (or a library user) turns these events into lines, and answers its questions in callbacks.
// No behaviour of its own: types only.
import type { LimitReached } from '../agent/budget.js';
import type { InFlightPolicy } from '../agent/in-flight.js';
import type { Approver, PermissionCheck } from '../agent/tool-call.js';
import type { StepEvent } from '../valve/run-journal.js';
import type { ModelNotice, ModelProvider } from '../model/index.js';
import type { AnyTool } from '../tools/types.js';
import type { SandboxChoice, SandboxRequest } from './sandbox.js';
import type { FileChange } from '../errors/index.js';
import type { PushEvent } from '../journal/pusher.js';
import type { HookDefinition } from '../tools/hook-command.js';
import type { HookNotice } from '../agent/loop.js';
import type { HookWarning } from '../agent/hooks.js';
import type { SessionHold } from './hold.js';
import type { MessageExpansion } from './message-expansion.js';
import type { Repository } from '../git/repository.js';
import type { RestoreResult } from '../worktree/restore.js';

/** The options every way of driving a run shares (start, resume, continue). */
export interface SessionOptions {
  /** A directory inside the repository the agent works in. Default: the current directory. */
  dir?: string;
  /**
   * The repository around `dir` when the caller found it already (the CLI does, for its settings):
   * the journal is opened on it, and git is not asked again. Default: found from `dir`.
   */
  repository?: Repository;
  /** An Anthropic model id, or `script:<file>` for a scripted model. Default: the run's model, else DEFAULT_MODEL. */
  model?: string;
  /** The model a new run takes when `model` is not given (settings' `model`); an existing run keeps its own. */
  defaultModel?: string;
  /** The model to talk to. Default: made from `model` on the first live call, so a replay needs no key. */
  provider?: ModelProvider | (() => ModelProvider | Promise<ModelProvider>);
  /**
   * Leave the run's background commands (run_bash's run_in_background) running when the run's
   * process ends its turn: the caller stops them (stopAllBackgroundCommands). An interactive
   * session keeps them between its messages and stops them when it ends. Default: the run's end
   * stops them.
   */
  keepBackgroundCommands?: boolean;
  /** The tools the model gets. Default: every built-in tool (createTools) on the repository root. */
  tools?: AnyTool[] | ((root: string) => AnyTool[]);
  /** Asked before each live tool call that needs approval. Default: every call is approved. */
  approve?: Approver;
  /** Settings' allow and deny rules, asked before `approve` for every live tool call: a deny holds even when `approve` says yes. */
  permission?: PermissionCheck;
  /**
   * How what the person typed becomes what the model is sent: custom commands (`/greet Ada`) and
   * `@path` mentions (message-expansion.ts). Only a new task or a new follow-up is expanded; the
   * expansion is recorded, so a replay sends what was sent. Default: nothing is expanded.
   */
  expand?: MessageExpansion;
  /** Stop before the step that would pass this many steps of the run (any kind). No limit by default. */
  maxSteps?: number;
  /** Stop before the model call that would pass this many model calls of the run (compactions included). */
  maxTurns?: number;
  /** Stop before a model call once the run's estimated cost (US dollars, from recorded usage) reaches this. */
  maxCost?: number;
  /** The longest answer the model may give, in tokens (pinned). Default 8192 (plus the thinking budget). */
  maxTokens?: number;
  /** The longest retry-after (seconds) of a busy model service that is waited out; a longer one stops the run cleanly. Default 60. */
  maxRetryWait?: number;
  /** false: never compact the conversation (pinned). Default: compact when it nears the context window. */
  compact?: boolean;
  /** The fraction of the context window at which to compact (pinned). Default 0.8. */
  compactAt?: number;
  /** The model's context window in tokens (pinned). Default: the model's known window, else 200,000. */
  contextWindow?: number;
  /** Extended thinking's token budget (pinned). Default: no thinking. */
  thinking?: number;
  /** A tool call found started-but-unrecorded after a crash: report it to the model (default), rerun it, or fail. */
  inFlight?: InFlightPolicy;
  /** When the working tree differs from the last checkpoint: put it back, or go on with it as it is. */
  worktree?: 'restore' | 'keep';
  /** Asked when the working tree differs and neither `worktree` nor a clean checkout decides. Without it, a DriftError stops the run. */
  onDrift?: (drift: DriftQuestion) => Promise<'restore' | 'keep' | 'stop'>;
  /** How run_bash runs commands: in bubblewrap by default, where the machine has it. */
  sandbox?: SandboxRequest;
  /** Asked when bubblewrap is missing or cannot start (`remedy`: how this platform gets one): true runs commands unconfined. Without it, SandboxUnavailableError stops the run. */
  onSandboxUnavailable?: (reason: string, remedy: string) => Promise<boolean>;
  /**
   * MCP servers besides `.mcp.json`'s, by name, in its format (settings' `mcpServers`); they win on
   * a name both define. Checked as outside input. `mcpServersSource` names where they came from, for
   * messages: one file for all, or one per server name.
   */
  mcpServers?: Record<string, unknown>;
  mcpServersSource?: string | Record<string, string>;
  /**
   * The repository's own `.mcp.json` is trusted: its servers start (in the sandbox, with the variables
   * they name through `${VAR}`) when a new run lists their tools. Default false: a repository's
   * `.mcp.json` is not read, its servers do not start, and a `repository-left-out` event names them;
   * pass the servers you mean to run in `mcpServers` instead (docs/trust.md, docs/library.md).
   */
  trustRepository?: boolean;
  /**
   * Fetch this remote's journal before the run is looked for, then push the agent-journal branch to
   * it after every step (in the background; see journal/pusher.ts). The CLI passes `--push <remote>`,
   * else the `remote` setting. Default: a run a fetched journal holds pushes to that remote (fenced
   * against it, see `fencedFrom`; fetched first too); false: never, not even then (`--no-push`).
   */
  push?: string | false;
  /** Set by the entry points when `push` was not asked for but chosen because a fetched journal of this remote holds the run: the session says the run is fenced against it. */
  fencedFrom?: string;
  /** One git call's limit when pushing, in seconds (--push-timeout). Default: $SAVEPOINT_PUSH_TIMEOUT, else 30. */
  pushTimeout?: number;
  /** How long pushes may keep failing before a push that must land gives up, in seconds (--push-retry). Default: $SAVEPOINT_PUSH_RETRY, else 60. */
  pushRetry?: number;
  /** The environment secrets are read from (for redaction) and credentials checked in. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Aborting stops the run (Ctrl-C): a live command's process group is stopped and the step recorded
   * as stopped, with its output so far; a model call in progress is dropped (it is made again). A
   * StoppedBySignalError as the abort reason names the signal in that record.
   */
  signal?: AbortSignal;
  /**
   * Hooks in force, in Claude Code's format flattened (settings' `hooks`, docs/settings.md): each runs
   * live inside the step it belongs to, its outcome recorded with it; a `sandboxed` one (from the
   * repository's settings) in the run's sandbox. Default: none.
   */
  hooks?: HookDefinition[];
  /** Every step, streamed text and working-tree decision, as it happens. */
  onEvent?: (event: SessionEvent) => void;
  /**
   * An interactive session's hold on its run (hold.ts): the run stays open after the turn, its loop
   * waiting at the answer, and the session's next message to it replays nothing.
   */
  hold?: SessionHold;
}

/** The working tree differs from the run's last checkpoint: what the `onDrift` callback is shown. */
export interface DriftQuestion {
  run: string;
  /** The step that recorded the checkpoint (0: when the run started). */
  step: number;
  changes: FileChange[];
}

/** Where a run's MCP servers run, by name: those savepoint starts (stdio: in the run's sandbox, like commands), those of them given the network in settings, and those reached over HTTP (remote, not sandboxed). */
export interface McpPlaces {
  started: string[];
  network: string[];
  remote: string[];
}

/** How the run was found when the session opened it. */
export type OpenedAs = 'new' | 'resuming' | 'finished' | 'continuing';

/** What a session reports besides the valve's own step events. `followUpGivenAt`: the step that already recorded this follow-up (the identical `continue` again). */
export type SessionEvent =
  | StepEvent
  /**
   * interrupted: the last attempt was stopped by a signal (not a crash); inFlight: the journal's last step has an intent and no result; followUpGivenAt: the step that already recorded this follow-up; instructions: the project instructions file pinned into a new run;
   * held: the session held the run open since its last turn (SessionOptions.hold): nothing replays, the loop goes on from its answer;
   * followUpStep: the step of the run's latest follow-up (`continue`), new or recorded: the steps before it are the conversation that follow-up continued, so replaying them rebuilds it and saves nothing;
   * fromSnapshot: the run was opened from its snapshot at this step (valve/snapshot.ts): the loop starts there, and only the steps after it replay.
   */
  | {
      type: 'opened';
      run: string;
      task: string;
      model: string;
      openedAs: OpenedAs;
      recordedSteps: number;
      interrupted: boolean;
      inFlight: boolean;
      refused?: boolean;
      killedBeforeRecording?: KilledAttempt;
      followUpGivenAt?: number;
      followUpStep?: number;
      instructions?: string;
      held?: boolean;
      fromSnapshot?: number;
    }
  /** A new run's instructions file (`AGENTS.md`, `CLAUDE.md`) that resolves outside the folder it was found in (a symbolic link out of the repository): not read, not in the prompt. */
  | { type: 'instructions-left-out'; file: string; target: string; within: 'repository' | 'config folder' }
  /** The run came from (or went to) this remote's fetched journal: it pushes there as `--push <remote>` would, so a one-shot effect runs only once the remote has its start. Said after `opened` when the run will go live. */
  | { type: 'fenced'; remote: string }
  /** How this process's commands (and the MCP servers it starts, `mcp`) run, once chosen (before anything runs live): in bubblewrap (with what it allows) or unconfined, and how that was decided. */
  | { type: 'sandbox'; kind: 'bwrap' | 'none'; network: boolean; gitWrites: boolean; choice: SandboxChoice; mcp?: McpPlaces }
  | { type: 'text'; text: string }
  /** A hook's decision the person is told: their prompt blocked (not sent), or the model sent on by a Stop hook (live or replayed). */
  | ({ type: 'hook' } & HookNotice)
  /** A hook that failed (an exit other than 0 or 2, a timeout, no start): the run went on as if it had not run. */
  | ({ type: 'hook-warning' } & HookWarning)
  | { type: 'thinking'; text: string }
  /** The conversation was compacted at `position` (a compact step): its size in tokens before and after. */
  | { type: 'compaction'; position: number; replayed: boolean; tokensBefore: number | null; tokensAfter: number | null }
  /** A live command's output as it comes (run_bash); the step's result holds all of it. */
  | { type: 'output'; chunk: string }
  | { type: 'journal-restored'; restored: string; found?: string }
  /** `--push`: a push failed and is tried again, landed although git said it failed, or landed again after failing. */
  | PushEvent
  /** `--push`: the run ended with appends not on the remote (`#4` for step 4, `run.json`): why, and the command that pushes them. */
  | { type: 'push-behind'; remote: string; unpushed: string[]; reason: string; command: string }
  /** The repository's `.mcp.json` names MCP servers that were not started, because `trustRepository` was not given (nor the servers in `mcpServers`). */
  | { type: 'repository-left-out'; file: string; servers: string[] }
  /** An MCP server that could not be started or listed when the run was created: its tools are not offered to this run. */
  | {
      type: 'mcp-unavailable';
      server: string;
      message: string;
      /** A stdio server's stderr log (absolute); none for an HTTP server. */ log?: string;
    }
  /**
   * `run` found the task's finished run (`previous`, finished at `finishedAt`) on a repository that moved on since: a new
   * commit (`commit`: HEAD then and now) or other files (`changes`, against its last checkpoint). The task is new work: run `run` starts now.
   */
  | {
      type: 'new-run-for-task';
      run: string;
      previous: string;
      finishedAt: string;
      commit?: { from?: string; to?: string };
      changes: FileChange[];
    }
  /** A finished run is replayed over a working tree that differs from its last checkpoint (recorded at `step`; 0: when it started): its answer was about other files. */
  | { type: 'finished-over-changes'; run: string; finishedAt: string; step: number; changes: FileChange[] }
  /** What the SDK's lists say about the run's model (deprecated, with its end of life; or --thinking deprecated for it): once per run, at its first live model call. */
  | ({ type: 'model-notice' } & ModelNotice)
  /**
   * The working tree was put back as the journal recorded it at `step`: for --restore (flag), a clean
   * checkout of the base commit, the person's yes (chosen), or a fork going live on its parent's
   * files (fork). left: files that differ but the run never wrote, left as the person has them;
   * saved: the ref that holds every file it overwrote or removed, and the command that brings them back.
   */
  | ({
      type: 'worktree-restored';
      reason: 'flag' | 'clean-base' | 'chosen' | 'fork';
      step: number;
      saved?: { ref: string; files: string[]; command: string };
    } & RestoreResult)
  /** The run goes on with files that differ from its checkpoint: --keep-worktree (flag), a session's message or `continue` (default), the person's answer (chosen), a step in flight at a crash, or its subagents' work at a crash (subagents). */
  | { type: 'worktree-kept'; reason: 'flag' | 'default' | 'in-flight' | 'chosen' | 'subagents'; step: number; changes: FileChange[] }
  /** A step of a subagent (its run, and the description and parent step of the task call that started it), as the valve told it. */
  | { type: 'subagent'; run: string; description: string; parentStep: number; event: StepEvent };

/** The last attempt, when it ran an in-flight step again (--in-flight rerun) and was killed before it recorded anything: who it was. */
export interface KilledAttempt {
  attempt: number;
  startedAt: string;
  host: string;
  pid: number;
  /** The step it was running again. */
  rerun: number;
}

/** How a session's run ended. An error (divergence, drift refused, a failed model call) is thrown instead. */
export interface RunOutcome {
  run: string;
  /**
   * finished: the model gave its final answer; refused: its final answer was a refusal (stop reason
   * "refusal"), the task not done; max-steps, max-turns, max-cost: stopped at that limit;
   * interrupted: the signal aborted it.
   */
  status: 'finished' | 'refused' | LimitReached['limit'] | 'interrupted';
  /** The limit that stopped it (its value, and where the run stood), when the status names one. */
  limit?: LimitReached;
  /** The final answer ('' unless finished). */
  final: string;
  /** Only a change was asked (a model, a compaction) of a run stopped in its turn: it took it and waits for a message, unfinished (status 'finished', final ''). */
  waiting?: boolean;
  /** Steps the loop took in all, replayed and live. */
  steps: number;
  /** Of those, how many this process replayed from the journal and ran live. */
  replayed: number;
  live: number;
  /** A finished run replayed over changed files: how they differ from its last checkpoint. */
  changedSince?: FileChange[];
  /** `--push`: the run ended with steps not on the remote (a push-behind event named them); why. The CLI exits 1 with it. */
  pushFailure?: Error;
}
