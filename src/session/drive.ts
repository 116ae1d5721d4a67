// One run's life, from opening its journal to its final answer. The entry points (start.ts) find
// the run through a journal store they opened; that store, its repository and its object store are
// the run's one handle, passed down from here: nothing below finds the repository again.
//   open      the run's journal (its lock, its entries), with the configuration it pinned
//   begin     one live run per working tree; what the run is (new, resuming, finished, continuing: run-plan.ts)
//   settle    the working tree against the last checkpoint; how commands run (the sandbox)
//   loop      the agent loop through the valve, a checkpoint after each step that may change files
//   end       run.json says how it ended: finished, stopped at a limit, interrupted, or failed
import { CONFIG_STEP_KIND, runAgent, type AgentOutcome, type ConfigChange, type FollowUp, type NextMessage } from '../agent/loop.js';
import { openRun } from '../valve/open-journal.js';
import type { RunJournal } from '../valve/run-journal.js';
import {
  DriftError,
  MissingCredentialsError,
  StoppedBySignalError,
  stopSignalWords,
  RestoreConflictError,
  RestoreWouldUndoError,
  UnsafeCheckpointError,
  WorktreeBusyError,
  type FileChange,
} from '../errors/index.js';
import type { RunConfig } from '../journal/entry.js';
import type { JournalPusher } from '../journal/pusher.js';
import type { JournalStore } from '../journal/store.js';
import { ROLL_TRIGGER_PACKS } from '../git/pack-rollup.js';
import { hasAnthropicCredentials, SCRIPT_PREFIX } from '../model/index.js';
import type { ModelProvider } from '../model/types.js';
import { openRunSecrets } from '../redact/run-secrets.js';
import { backgroundCommandsOf, createTaskTool, createTools, TASK_TOOL_SHOWN, type BackgroundCommands } from '../tools/index.js';
import { backgroundJournal } from './background-journal.js';
import { SpareShells } from '../tools/spare-shell.js';
import {
  createMcpTools,
  loadMcpServers,
  MCP_CONFIG_FILE,
  mcpLogDir,
  McpConnections,
  mcpSecretEnv,
  offerMcpTools,
  type McpServerConfig,
} from '../tools/mcp/index.js';
import { readMcpJsonServers } from '../settings/index.js';
import type { AnyTool } from '../tools/types.js';
import { FileStepLock, WorktreeCheckpointer } from '../worktree/checkpointer.js';
import { WorktreeSnapshotter } from '../worktree/snapshot.js';
import { holdWorktree } from './worktree-lock.js';
import type { McpPlaces, RunOutcome, SessionEvent, SessionOptions } from './types.js';
import { planRun, type RunPlan } from './run-plan.js';
import { finishedRunChanges, finishedRunMoved } from './finished-run.js';
import { RunSandboxChoice } from './sandbox.js';
import { RunTurn } from './turn.js';
import { gitPaths, probeSandboxAsync } from '../tools/sandbox.js';
import { runConfig } from './config.js';
import { readInstructions, type InstructionsLeftOut } from './instructions.js';
import { settleWorktree } from './worktree.js';
import { createRunPusher, flushRunPushes } from './pushing.js';
import { providerFor } from './providers.js';
import { Hooks } from '../agent/hooks.js';
import { Subagents } from './subagents.js';
import { subagentsUnderway } from './subagent-runs.js';
import { optionsFingerprint, type HeldRequest, type HeldRun } from './hold.js';
import { expandMessage } from './message-expansion.js';

/** The run a session drives, once the entry point has found or named it through `store`. */
export interface RunTarget {
  /** The journal store the entry point opened: the run's repository and object store come with it. */
  store: JournalStore;
  run: string;
  /** What the person typed: recorded in run.json, the run's identity. */
  task: string;
  /**
   * What the model is sent for the task when the run is new, when it differs from the task (a
   * custom command, `@path` mentions): recorded in run.json as its prompt. Asked only for a new run.
   */
  prompt?: () => string | undefined;
  model: string;
  /** A follow-up instruction to record after the run's recorded ones (`continue`). */
  followUp?: string;
  /** What the model is sent for a new follow-up when it differs from `followUp` (recorded as the user step's result). Asked only when the follow-up is new. */
  followUpSent?: () => string | undefined;
  /**
   * The follow-up is a new message whatever the journal holds: one the person sent in a session,
   * recorded once each even when it repeats the last one word for word. Without it, the identical
   * `continue` given again before the run answered its last follow-up (after a crash) resumes that one.
   */
  newMessage?: boolean;
  /** A model to change to (a config step, before the follow-up): `--model` on `continue`, `/model`. The same model as the run's is no change. */
  modelChange?: string;
  /** Compact the conversation before the follow-up (a config step, then a compact step): `/compact`. */
  compact?: boolean;
  /** Files the person changed by hand are kept unless a flag says otherwise (a session's message, `continue`): no question. */
  keepByDefault?: boolean;
  /** A new run's lineage in run.json: the task's earlier run, finished on a repository that has moved on since. */
  lineage?: { previousRun: string };
  /**
   * `run`'s derived id found a finished run: when the repository moved on since it finished (a new
   * commit, other files), the task is new work, driven as the new run `renew.run` instead.
   */
  renew?: { run: string; model: string };
}

// After Ctrl-C, SIGTERM or SIGHUP the CLI ends within two seconds: the flush gets at most this long
// of them, and ends by INTERRUPTED_FLUSH_BY_MS after the signal whatever came before it (on a loaded
// machine, recording the stopped step can take most of the two seconds), so that what did not reach
// the remote and the last words are said before the end.
const INTERRUPTED_FLUSH_MS = 800;
const INTERRUPTED_FLUSH_BY_MS = 1200;

/**
 * A held run's small packs roll up once the session has waited this long for its next message.
 * The roll-up (git deltifying the packs, then the history deltas in this process) takes 0.3-1 s of
 * CPU and writes a pack; started at once, it ran through the next message's append and request
 * when the person answered quickly (Enter → request at 6,000 steps: its fsyncs waited behind the
 * roll-up's). A person reads the answer and types for longer than this; a message sent sooner
 * moves the roll-up on to the next pause, and the run's end does it in any case.
 */
export const BETWEEN_MESSAGES_ROLLUP_MS = 1500;

// Errors after which the run's journal must stay exactly as it was, also once the loop started: nothing ran. A drift refusal
// waits for --restore or --keep-worktree (so `savepoint runs` must not call the run failed, and no
// commit lands for a question); a checkpoint refused as unsafe or blocked by a file ran nothing
// either; nor did a run refused for want of credentials, or because another run holds the tree.
const NOTHING_RAN = [
  DriftError,
  UnsafeCheckpointError,
  RestoreConflictError,
  RestoreWouldUndoError,
  MissingCredentialsError,
  WorktreeBusyError,
];

/**
 * Drives `target` to its end through the journal. Throws on a divergence, a refused drift or a
 * failure. With `options.hold` (an interactive session), a run that ends its turn at an answer
 * stays open, its loop waiting for the session's next message (HeldLoop).
 */
export async function driveSession(target: RunTarget, options: SessionOptions): Promise<RunOutcome> {
  await options.hold?.close(); // a run held before (another one, or not taken for this turn) closes first: one open run per session
  const life = await RunLife.open(target, options);
  let renewed: RunTarget | undefined;
  let held: HeldLoop | undefined;
  try {
    renewed = await life.renewal();
    if (!renewed) {
      const plan = life.begin();
      if (plan.replayOnly) await life.compareFinishedFiles();
      else await life.settle(plan);
      if (!options.hold) return await life.end(await life.loop(plan.followUps, plan.configChanges, plan.changesOnly));
      held = new HeldLoop(life, options);
      return await held.first(plan);
    }
  } catch (error) {
    return await life.fail(error);
  } finally {
    if (!held?.waiting) {
      await held?.settled();
      await life.mcp.close();
      life.close();
    }
  }
  // The old run stays as it was (readable, and `--run <id>` replays it); the new one is driven now.
  return driveSession(renewed, options);
}

// The model a run uses now (its last config step's, replayed or live), for a held run's next /model.
class ModelInUse {
  constructor(public current: string) {}

  /** Notes a config step's model, replayed or live: the run's model from then on. */
  note(event: SessionEvent): void {
    if ((event.type === 'recorded' || event.type === 'replayed') && event.kind === CONFIG_STEP_KIND) {
      const model = (event.result as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string') this.current = model;
    }
  }
}

/** What RunLife.open builds, in order, each part from the parts before it: the run, open. */
interface RunParts {
  turn: RunTurn;
  sandbox: RunSandboxChoice;
  /** --push: the background pusher, flushed at the run's end. */
  pusher: JournalPusher | undefined;
  /** The run's MCP servers: started when a new run lists their tools or a live step calls one, stopped at its end. */
  mcp: McpConnections;
  secrets: ReturnType<typeof openRunSecrets>;
  snapshotter: WorktreeSnapshotter;
  /** run_bash's next command's process, started ahead (tools/spare-shell.ts) and stopped at the run's end. */
  spares: SpareShells;
  /** run_bash's background commands of this run in this process: stopped at the run's end, unless the caller keeps them (SessionOptions.keepBackgroundCommands). */
  background: BackgroundCommands;
  /** The model provider of a model for this run and its subagents, made on its first live call. */
  provider: (model: string) => Promise<ModelProvider>;
  /** The run's subagents (its task calls), made once the run was pinned: their approvals, and how each is driven. */
  subagents: Subagents;
  model: ModelInUse;
  /** Instructions files a new run left out (they resolve outside their folder): said under the header. */
  instructionsLeftOut: InstructionsLeftOut[];
  journal: RunJournal;
  /** The run's tools: the built-in ones and the MCP tools its configuration pinned. */
  tools: AnyTool[];
}

// One run, open: its journal, its working tree's checkpoints, its tools and secrets.
class RunLife {
  private worktreeLock: { release(): void } | undefined;
  /** Until the loop starts (or, held, goes on), nothing has run: a refusal (no credentials, no sandbox, drift) leaves the run as it was. */
  loopStarted = false;
  // The journal's counts when this turn began: a held run's outcome says what its turn replayed and ran.
  private turnStart = { replayed: 0, live: 0 };
  // A finished run replayed over files that differ from its last checkpoint: the step of that checkpoint, and the files.
  private changedSince: { step: number; changes: FileChange[] } | undefined;
  // The roll-up waiting for a pause between messages (betweenMessages).
  private pauseRollup: NodeJS.Timeout | undefined;
  private instructionsLeftOut: InstructionsLeftOut[];
  readonly journal: RunJournal;
  /** The run's MCP servers, stopped at its end. */
  readonly mcp: McpConnections;

  private constructor(
    private target: RunTarget,
    private readonly parts: RunParts,
  ) {
    this.journal = parts.journal;
    this.mcp = parts.mcp;
    this.instructionsLeftOut = parts.instructionsLeftOut;
  }

  /** The run's id. */
  get runId(): string {
    return this.target.run;
  }

  // The turn's options (a held run's next turn brings its own).
  private get options(): SessionOptions {
    return this.parts.turn.options;
  }

  private emit(event: SessionEvent): void {
    this.parts.turn.emit(event);
  }

  /** A held run's next message: its request and the turn's options (listeners, approver, signal) from now on. */
  nextTurn(request: HeldRequest, options: SessionOptions): void {
    clearTimeout(this.pauseRollup); // the next message came before the pause's roll-up: it waits for the next pause
    const { followUp: _f, newMessage: _n, modelChange: _m, compact: _c, renew: _r, lineage: _l, ...base } = this.target;
    const { secrets } = this.parts;
    // Redacted before it is a step's key, as continueRun does: the journal never holds the secret.
    const message = secrets.redactor.text(request.message.trim());
    // What the model is sent for it (a custom command's text, the files `@` mentions), as continueRun expands it.
    const sent = options.expand && message ? { followUpSent: () => this.expanded(request.message, options) } : {};
    this.target = {
      ...base,
      model: this.parts.model.current,
      keepByDefault: true,
      ...(message ? { followUp: message, ...sent, ...(request.newMessage ? { newMessage: true } : {}) } : {}),
      ...(request.compact ? { compact: true } : {}),
      ...(request.model !== undefined ? { modelChange: request.model } : {}),
    };
    this.parts.turn.next(options);
    this.changedSince = undefined;
    this.instructionsLeftOut = []; // said when the run opened
    this.turnStart = this.journal.stats;
    this.journal.record.newAttempt(); // each message its own attempt in run.json, as when it opened the run
  }

  // A message as the model is sent it (custom commands, `@` mentions), redacted; undefined: as typed.
  private expanded(typed: string, options: SessionOptions): string | undefined {
    const root = this.target.store.repo.root;
    const sent = expandMessage(typed, options.expand, {
      root,
      cwd: options.dir ?? process.cwd(),
      ...(options.permission ? { permission: options.permission } : {}),
    });
    return sent === undefined ? undefined : this.parts.secrets.redactor.text(sent);
  }

  // What this turn replayed and ran live.
  private turnStats(): { replayed: number; live: number } {
    const { replayed, live } = this.journal.stats;
    return { replayed: replayed - this.turnStart.replayed, live: live - this.turnStart.live };
  }

  /**
   * Opens the run's journal on the entry point's store, with the configuration the run pinned (or
   * pins now). Each part is built in order from the ones before it, and nothing below reaches back
   * for this one: what a part reads of the turn (its approver, signal, listener) it reads from
   * `turn`, how commands run from `sandbox`.
   */
  static async open(target: RunTarget, options: SessionOptions): Promise<RunLife> {
    const { store } = target;
    const root = store.repo.root;
    // The git directories the sandbox keeps read-only, from the run's one handle (no git asked).
    const gitDirs = gitPaths(root, store.repo);
    // The sandbox probe runs while the journal opens (the choice awaits it when the run settles).
    if (options.sandbox?.use !== false) void probeSandboxAsync(root, gitDirs);
    const env = options.env ?? process.env;
    // The turn's options and listener, behind one object: a held run's next turn brings its own.
    const turn = new RunTurn(options);
    const { emit } = turn;
    // --push: in the background, waited for only before a one-shot effect and at the end (a bad
    // $SAVEPOINT_PUSH_TIMEOUT stops here, before anything starts).
    const pusher = createRunPusher(store, target.run, options, env, emit);
    // MCP servers: checked before anything runs; their configurations' secrets are redacted too.
    // The repository's `.mcp.json` only when the caller trusts it: its servers would run the
    // repository's commands with the person's variables, so a cloned repository must not start
    // them on its own (docs/trust.md).
    const trustRepository = options.trustRepository === true;
    const mcpServers = loadMcpServers(root, {
      env,
      readMcpJson: trustRepository,
      ...(options.mcpServers
        ? { given: { servers: options.mcpServers, source: options.mcpServersSource ?? 'settings (mcpServers)' } }
        : {}),
    });
    if (!trustRepository) {
      const leftOut = Object.keys(readMcpJsonServers(root) ?? {}).filter((name) => !mcpServers.has(name));
      if (leftOut.length) emit({ type: 'repository-left-out', file: MCP_CONFIG_FILE, servers: leftOut });
    }
    // The sandbox is decided once, by the first that needs it: the run's settling, or a new run's
    // stdio MCP servers listing their tools while the journal opens.
    const sandbox = new RunSandboxChoice(root, options.sandbox, options.onSandboxUnavailable);
    const mcp = new McpConnections(mcpServers, {
      logDir: mcpLogDir(store.repo.commonDir),
      sandbox: async () => ({ config: (await sandbox.decide()).sandbox, root, gitDirs }),
    });
    const secrets = openRunSecrets(store.repo.commonDir, mcpServers.size ? { ...env, ...mcpSecretEnv(mcpServers.values()) } : env);
    // The checkpoints write through the run's own object store: one handle for the run.
    const snapshotter = new WorktreeSnapshotter(store.repo, store.objects, {
      redactText: secrets.redactor.text,
      recordName: secrets.recordName,
    });
    const spares = new SpareShells();
    // The run's background commands: the same at every opening of the run in this process (a
    // session's next message reads the server its last one started); ids counted from the journal.
    const background = backgroundCommandsOf(target.run);
    // The model providers of the run, shared with its subagents (one notice per model), made on the first live call.
    let providers: ReturnType<typeof providerFor> | undefined;
    const provider = (model: string) =>
      (providers ??= providerFor(turn.options.provider, (notice) => emit({ type: 'model-notice', ...notice }), turn.options.maxRetryWait))(
        model,
      );
    // Held by the steps that may change files, the run's and its subagents', from start to checkpoint.
    const files = new FileStepLock();
    // run_bash asks for the sandbox at each call: it is chosen before anything runs live. The task
    // tool (the session's own: a caller's tools have none) is shown to a new run's configuration
    // now, and made with the subagents it drives once the run has pinned what they inherit.
    const tools =
      typeof options.tools === 'function'
        ? options.tools(root)
        : (options.tools ?? createTools(root, { sandbox: () => sandbox.current, gitDirs, spares, background }));
    const withTask = options.tools === undefined;
    const shown = withTask ? [...tools, TASK_TOOL_SHOWN] : tools;
    const model = new ModelInUse(target.model);
    const instructionsLeftOut: InstructionsLeftOut[] = [];
    // Closed when the run cannot open: servers a new run listed before its journal failed to open.
    const giveUp = async (error: unknown): Promise<never> => {
      pusher?.close();
      await mcp.close();
      throw error;
    };
    // The run, opened and read: what it is (new, or what its run.json says) decides what it
    // records, made here and handed down (pinned) before its first step.
    const opening = await openRun(store, {
      run: target.run,
      task: target.task,
      model: target.model,
      ...(target.lineage ? { lineage: target.lineage } : {}),
      // A model call about to go out: the next command's shell starts while the model answers.
      onEvent: (event) => {
        if (event.type === 'started' && event.kind === 'model') spares.idle();
        model.note(event);
        emit(event);
      },
      redact: secrets.redactor.value,
      // From the run's snapshot, when it has a valid one: the steps before it are not replayed. Not
      // under a limit, which a full replay may stop at before the snapshot's step.
      fromSnapshot: options.maxSteps === undefined && options.maxTurns === undefined && options.maxCost === undefined,
      // A step that may change files: its checkpoint through the run's snapshotter, under the
      // file-step lock its subagents share (each checkpoint holds whole steps).
      checkpointer: new WorktreeCheckpointer(snapshotter, files),
      store: {
        ...(pusher ? { afterAppend: pusher.afterAppend, beforeFence: pusher.settle } : {}),
        // The branch was deleted or moved back under the run, and put back where this process left it.
        onRestored: ({ restored, found }) => emit({ type: 'journal-restored', restored, ...(found ? { found } : {}) }),
      },
    }).catch(giveUp);
    let journal: RunJournal;
    try {
      // A new run pins the build's prompt (with the project's instructions), tools and settings,
      // and the tree it starts from; an existing one keeps what it recorded.
      const prompt = opening.isNew ? target.prompt?.() : undefined;
      const existing = opening.record;
      let config: RunConfig;
      if (existing) config = runConfig(existing, { ...options, model: target.model }, shown);
      else {
        // A new run also pins its MCP servers' tools, listed now (the servers stay up for its live steps).
        const unavailable = (server: string, message: string) =>
          emit({ type: 'mcp-unavailable', server, message, ...(mcp.logFile(server) ? { log: mcp.logFile(server)! } : {}) });
        // A refusal (no sandbox, none waived) is the run's, said as such, not one server's failure.
        if ([...mcpServers.values()].some((server) => server.type === 'stdio')) await sandbox.decide();
        const offered = mcpServers.size ? await offerMcpTools(mcp, unavailable) : undefined;
        const instructions = readInstructions(root, secrets.redactor.text, {
          cwd: options.dir ?? process.cwd(),
          env: options.env ?? process.env,
          onLeftOut: (file) => instructionsLeftOut.push(file),
        });
        config = runConfig(existing, { ...options, model: target.model }, shown, instructions);
        if (offered?.pinned.length) config = { ...config, tools: [...config.tools, ...offered.definitions], mcp: offered.pinned };
      }
      const startCheckpoint = opening.isNew ? snapshotter.snapshot().tree : undefined;
      journal = await opening.pin({
        ...(prompt !== undefined ? { prompt } : {}),
        config,
        ...(startCheckpoint !== undefined ? { startCheckpoint } : {}),
      });
    } catch (error) {
      opening.release();
      return giveUp(error);
    }
    // What the open journal lends: background commands count their ids and track their groups in
    // it; the subagents are made with the configuration it pinned and the run's tools, and the task
    // tool with them. The turn's approver, rules and signal are read from `turn` (a held run's next
    // message brings its own).
    background.useJournal(backgroundJournal(store, target.run, journal));
    const mcpTools = journal.config ? createMcpTools(journal.config, mcp) : [];
    const subagents = new Subagents({
      store,
      run: target.run,
      config: journal.config!,
      tools: [...tools, ...mcpTools],
      files,
      provider,
      sandbox: () => sandbox.current,
      secrets,
      get approve() {
        return turn.approve;
      },
      get permission() {
        return turn.permission;
      },
      get inFlight() {
        return turn.inFlight;
      },
      get signal() {
        return turn.signal;
      },
      emit,
    });
    const runTools = [...tools, ...(withTask ? [createTaskTool((request) => subagents.run(request))] : []), ...mcpTools];
    return new RunLife(target, {
      turn,
      sandbox,
      pusher,
      mcp,
      secrets,
      snapshotter,
      spares,
      background,
      provider,
      subagents,
      model,
      instructionsLeftOut,
      journal,
      tools: runTools,
    });
  }

  /**
   * A finished run found by `run`'s derived id, on a repository that moved on since it finished:
   * the new run of the same task to drive instead (said in one event), or undefined to go on with this one.
   */
  async renewal(): Promise<RunTarget | undefined> {
    const { target, journal } = this;
    const record = journal.record.current;
    if (!target.renew || record?.status !== 'finished') return undefined;
    const moved = await finishedRunMoved(record, journal, this.parts.snapshotter, target.store.repo);
    if (!moved) return undefined;
    this.emit({ type: 'new-run-for-task', run: target.renew.run, previous: target.run, finishedAt: record.updatedAt, ...moved });
    const { renew: _renew, ...rest } = target;
    return { ...rest, run: target.renew.run, model: target.renew.model, lineage: { previousRun: target.run } };
  }

  /**
   * Takes the working tree for a run that will go live (one live run per working tree; a finished
   * run only replays), adds the new follow-up, checks for credentials, and says what the run is.
   */
  begin(held = false): RunPlan {
    const { journal, target, options } = this;
    const record = journal.record.current;
    if (
      !this.worktreeLock &&
      (record?.status !== 'finished' || target.followUp !== undefined || target.modelChange !== undefined || target.compact)
    )
      this.worktreeLock = holdWorktree(this.target.store.repo, target.run);
    // Held, the history holds no recorded step any more (each was handed back): the plan is the new request's alone.
    const { replayOnly, followUps, configChanges, changesOnly, model, asksModel, opened } = planRun(journal, target);
    if (asksModel && !options.provider && !model.startsWith(SCRIPT_PREFIX) && !hasAnthropicCredentials(options.env ?? process.env))
      throw new MissingCredentialsError(model);
    this.emit({ type: 'opened', run: target.run, task: target.task, ...opened, ...(held ? { held: true } : {}) });
    for (const leftOut of this.instructionsLeftOut) this.emit({ type: 'instructions-left-out', ...leftOut });
    if (options.fencedFrom && !replayOnly) this.emit({ type: 'fenced', remote: options.fencedFrom });
    return { replayOnly, followUps, configChanges, changesOnly };
  }

  /**
   * A finished run replays its answer; the files it answered about may have changed since: say
   * which (the CLI prints them before the answer, and --json's final event carries them).
   */
  async compareFinishedFiles(): Promise<void> {
    const record = this.journal.record.current;
    if (!record) return;
    this.changedSince = await finishedRunChanges(record, this.journal, this.parts.snapshotter);
    if (this.changedSince)
      this.emit({
        type: 'finished-over-changes',
        run: this.target.run,
        finishedAt: record.updatedAt,
        step: this.changedSince.step,
        changes: this.changedSince.changes,
      });
  }

  /**
   * Before going live: the working tree against the last checkpoint (drift), then how commands run.
   * The person's own changes the run keeps ride with its next follow-up (`plan`'s), so the model is told.
   */
  async settle(plan: RunPlan): Promise<void> {
    const { journal, target, options } = this;
    const record = journal.record.current;
    if (record) {
      const { personChanges } = await settleWorktree({
        run: target.run,
        root: target.store.repo.root,
        record,
        history: journal.history,
        snapshotter: this.parts.snapshotter,
        reveal: this.parts.secrets.revealer.partial,
        store: journal.store,
        // A snapshot written but not recorded (the one drift is measured with) is kept from `git gc --prune=now`
        // until the next step's checkpoint lands: later checkpoints reuse its objects.
        keepReachable: (tree) => journal.store.local.keepTree(target.run, tree),
        options,
        keepByDefault: target.keepByDefault,
        // Subagents of task steps not yet recorded worked on the tree after the run's last checkpoint.
        subagentsUnderway: await subagentsUnderway(journal.store, target.run, journal.history.lastPosition),
        emit: (event) => this.emit(event),
      });
      tellOfHandEdits(plan, personChanges, journal.history.lastPosition, record.status === 'finished');
    }
    const { sandbox, choice } = await this.parts.sandbox.settle();
    // Recorded with this process's attempt at its first write: told now, never asked for during an append.
    journal.record.useSandbox(sandbox);
    // Said in the run's header: how this process's commands and MCP servers run.
    this.emit({ type: 'sandbox', ...sandbox, choice, ...mcpPlaces(this.mcp.servers) });
  }

  /** The agent loop, through the valve: replayed steps hand back their results, the first unrecorded one goes live. */
  loop(
    followUps: FollowUp[],
    configChanges: ConfigChange[],
    changesOnly = false,
    hold?: (done: AgentOutcome) => Promise<NextMessage | undefined>,
  ): Promise<AgentOutcome> {
    const { journal, target, options } = this;
    this.loopStarted = true;
    // Read at each use: a held run's later turns bring their own approver, rules and signal.
    const { turn } = this.parts;
    return runAgent({
      journal,
      // What the run sent (run.json's prompt) when it differs from what the person typed.
      task: journal.record.prompt ?? target.task,
      config: journal.config!,
      provider: this.parts.provider,
      tools: this.parts.tools,
      revealSecrets: this.parts.secrets.revealer.value,
      ...(options.hooks?.length ? { hooks: this.hooks(options.hooks) } : {}),
      onHook: (notice) => this.emit({ type: 'hook', ...notice }),
      followUps,
      configChanges,
      changesOnly,
      limits: { maxSteps: options.maxSteps, maxTurns: options.maxTurns, maxCost: options.maxCost },
      inFlight: options.inFlight,
      get approve() {
        return turn.approve;
      },
      get permission() {
        return turn.permission;
      },
      onText: (text) => this.emit({ type: 'text', text }),
      onOutput: (chunk) => this.emit({ type: 'output', chunk }),
      onThinking: (text) => this.emit({ type: 'thinking', text }),
      get signal() {
        return turn.signal;
      },
      ...(hold ? { hold } : {}),
    });
  }

  // The run's hooks, run in its working tree: the repository's in the run's sandbox (chosen in
  // settle(), before the loop), the person's own unconfined; a failed one is told as a warning.
  private hooks(hooks: NonNullable<SessionOptions['hooks']>): Hooks {
    const { target, options } = this;
    const root = target.store.repo.root;
    const place = {
      root,
      env: options.env ?? process.env,
      sandbox: () => this.parts.sandbox.current,
      gitDirs: gitPaths(root, target.store.repo),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    return new Hooks(hooks, place, target.run, (warning) => this.emit({ type: 'hook-warning', ...warning }));
  }

  /** Records how the loop ended: stopped at a limit (run.json's totals only), or finished with its answer. */
  async end(outcome: AgentOutcome): Promise<RunOutcome> {
    const { journal, target } = this;
    if (outcome.limit) {
      await journal.record.markStopped(outcome.limit.limit).catch(() => {}); // only run.json's totals: `runs` then reads no entry
      const pushFailure = await this.flush();
      return {
        ...(pushFailure ? { pushFailure } : {}),
        run: target.run,
        status: outcome.limit.limit,
        limit: outcome.limit,
        final: '',
        steps: outcome.steps,
        ...this.turnStats(),
      };
    }
    if (outcome.waiting) {
      // A change alone, given to a run stopped in its turn: the run stays stopped, waiting for a
      // message, as the person left it (run.json is not told it finished).
      if (this.turnStats().live > 0)
        await journal.record.markInterrupted('the person; a change alone, waiting for their message').catch(() => {});
      const pushFailure = await this.flush();
      return {
        ...(pushFailure ? { pushFailure } : {}),
        run: target.run,
        status: 'finished',
        waiting: true,
        final: '',
        steps: outcome.steps,
        ...this.turnStats(),
      };
    }
    await journal.finish('finished', { final: outcome.final, ...(outcome.refused ? { refused: true } : {}) });
    const pushFailure = await this.flush();
    return {
      ...(pushFailure ? { pushFailure } : {}),
      run: target.run,
      status: outcome.refused ? 'refused' : 'finished',
      final: outcome.final,
      steps: outcome.steps,
      ...this.turnStats(),
      ...(this.changedSince ? { changedSince: this.changedSince.changes } : {}),
    };
  }

  /** A throw: Ctrl-C is an outcome (interrupted); a refusal before anything ran leaves the run as it was; anything else marks it failed. */
  async fail(error: unknown): Promise<RunOutcome> {
    const { journal, target, options } = this;
    if (options.signal?.aborted) {
      const reason = options.signal.reason;
      await journal.record
        .markInterrupted(reason instanceof StoppedBySignalError ? stopSignalWords(reason.data.signal) : 'aborted')
        .catch(() => {});
      const since = reason instanceof StoppedBySignalError ? Date.now() - reason.at : 0;
      await this.flush(Math.max(0, Math.min(INTERRUPTED_FLUSH_MS, INTERRUPTED_FLUSH_BY_MS - since)));
      return { run: target.run, status: 'interrupted', final: '', steps: journal.history.lastPosition, ...this.turnStats() };
    }
    const untouched = !this.loopStarted || NOTHING_RAN.some((type) => error instanceof type);
    if (!untouched) await journal.finish('failed', { error: (error as Error).message }).catch(() => {});
    await this.flush();
    throw error;
  }

  // --push: what is left goes to the remote now, or the run says what did not (pushing.ts).
  private flush(capMs?: number): Promise<Error | undefined> {
    return flushRunPushes(this.parts.pusher, this.parts.turn.emit, capMs);
  }

  /**
   * A held run between messages: the working tree is free for another run (as between two
   * commands), and the run's small packs roll up as at a run's end, once the session has waited
   * BETWEEN_MESSAGES_ROLLUP_MS for the next message. The run's lock stays held.
   */
  betweenMessages(): void {
    this.worktreeLock?.release();
    this.worktreeLock = undefined;
    clearTimeout(this.pauseRollup);
    this.pauseRollup = setTimeout(() => void this.journal.store.objects.rollup.tidy().catch(() => undefined), BETWEEN_MESSAGES_ROLLUP_MS);
    this.pauseRollup.unref(); // a session ending meanwhile rolls up at its close instead
  }

  /** Releases the working tree and the run, then rolls up the run's small packs in the background. */
  close(): void {
    clearTimeout(this.pauseRollup);
    void this.parts.spares.close();
    // A run's end stops its background commands (this process's exit would, see os/background-process.ts).
    if (!this.options.keepBackgroundCommands) void this.parts.background.stopAll();
    this.parts.pusher?.close();
    this.worktreeLock?.release();
    this.journal.close();
    // The run's packs go into one deltified pack, so that what a run leaves in .git is small. It starts
    // once the outcome is handed back, so the CLI prints how the run ended first (the process exits
    // when it is done), and it never fails the run; a kill meanwhile loses nothing (the next run's end does it).
    // A run that ran fewer steps live than a roll-up's trigger (a CI job's resume: one answer, then
    // the end) does only the roll-up that is due: its few small packs wait for a later one, where a
    // whole tidy would deltify again every small pack there, a fresh clone's fetched journal too
    // (seconds, for one step).
    const rollup = this.journal.store.objects.rollup;
    const short = this.journal.stats.live < ROLL_TRIGGER_PACKS;
    setImmediate(() => void (short ? rollup.rollNow() : rollup.tidy()).catch(() => undefined));
  }
}

/**
 * A run held open between a session's messages: its loop waits at its final answer (AgentOptions.hold)
 * with the conversation as it is, and the next message is handed to it; nothing is read again or
 * replayed. A turn that does not end at an answer (an error, Ctrl-C, a limit) ends the hold: the
 * run closes as any run does, and the session's next message opens it from the journal.
 */
class HeldLoop implements HeldRun {
  readonly run: string;
  readonly fingerprint: string;
  /** Whether the loop waits for a message now (the run stays open after this turn). */
  waiting = false;
  private loopDone: Promise<AgentOutcome> | undefined;
  // The loop's wait: resolved with the next message, or undefined to end it.
  private feed: ((next: NextMessage | undefined) => void) | undefined;
  // Resolved when the loop reaches its answer and waits (the turn's end).
  private paused: ((done: AgentOutcome) => void) | undefined;
  private readonly provider: SessionOptions['provider'];
  private readonly tools: SessionOptions['tools'];
  private readonly env: SessionOptions['env'];

  constructor(
    private readonly life: RunLife,
    private readonly options: SessionOptions,
  ) {
    this.run = life.runId;
    this.fingerprint = optionsFingerprint(options);
    ({ provider: this.provider, tools: this.tools, env: this.env } = options);
  }

  /** Whether `options` bring the same provider, tools and environment as the ones the run was opened with. */
  readonly same = (options: SessionOptions): boolean =>
    options.provider === this.provider && options.tools === this.tools && options.env === this.env;

  /** The first turn: the loop starts (replaying what the journal holds) and runs to its answer or its end. */
  first(plan: RunPlan): Promise<RunOutcome> {
    const turn = this.nextPause();
    this.loopDone = this.life.loop(plan.followUps, plan.configChanges, plan.changesOnly, (done) => this.wait(done));
    return this.finishTurn(turn);
  }

  /** The next message: the run's turn as continueRun would drive it, through the waiting loop. */
  async go(request: HeldRequest, options: SessionOptions): Promise<RunOutcome> {
    const { life } = this;
    this.waiting = false;
    let fed = false;
    try {
      life.nextTurn(request, options);
      const plan = life.begin(true);
      await life.settle(plan);
      const turn = this.nextPause();
      // Changes are taken at once, in order, before the follow-up: the loop stands at its answer.
      this.take({ followUps: plan.followUps, configChanges: plan.configChanges.map(({ step: _step, ...change }) => change) });
      fed = true;
      return await this.finishTurn(turn);
    } catch (error) {
      if (!fed) life.loopStarted = false; // refused before the loop went on: nothing ran (as a run refused before its loop)
      return await life.fail(error);
    } finally {
      if (!this.waiting) await this.close();
    }
  }

  /** Ends the waiting loop and closes the run. */
  async close(): Promise<void> {
    this.waiting = false;
    await this.settled();
    await this.life.mcp.close();
    this.life.close();
  }

  /** The loop, told there is no next message, has ended (errors were the turn's, said then). */
  async settled(): Promise<void> {
    this.take(undefined);
    await this.loopDone?.catch(() => undefined);
  }

  private take(next: NextMessage | undefined): void {
    const feed = this.feed;
    this.feed = undefined;
    feed?.(next);
  }

  private wait(done: AgentOutcome): Promise<NextMessage | undefined> {
    return new Promise((resolve) => {
      this.feed = resolve;
      this.paused?.(done);
    });
  }

  private nextPause(): Promise<AgentOutcome> {
    return new Promise((resolve) => (this.paused = resolve));
  }

  // The turn ends when the loop waits at its answer (the run stays open) or ends (it closes).
  private async finishTurn(pause: Promise<AgentOutcome>): Promise<RunOutcome> {
    const ended = await Promise.race([
      this.loopDone!.then((outcome) => ({ outcome, waiting: false })),
      pause.then((outcome) => ({ outcome, waiting: true })),
    ]);
    const outcome = await this.life.end(ended.outcome);
    if (ended.waiting) {
      this.waiting = true;
      this.life.betweenMessages();
      await this.options.hold!.keep(this);
    }
    return outcome;
  }
}

// Where the run's MCP servers run, for the header: those it starts (in the sandbox, some with the
// network given in settings) and those it reaches over HTTP (elsewhere). Nothing when it has none.
function mcpPlaces(servers: ReadonlyMap<string, McpServerConfig>): { mcp?: McpPlaces } {
  if (servers.size === 0) return {};
  const all = [...servers.values()];
  return {
    mcp: {
      started: all.filter((s) => s.type === 'stdio').map((s) => s.name),
      network: all.filter((s) => s.type === 'stdio' && s.network).map((s) => s.name),
      remote: all.filter((s) => s.type === 'http').map((s) => s.name),
    },
  };
}

// The files the person changed, kept, go to the model in its next request: with the new follow-up
// when there is one, else (an unfinished run going on) in a step of their own after any new config
// step. A finished run given no message (a change of model) asks no model: its next message tells them.
function tellOfHandEdits(plan: RunPlan, changes: FileChange[], lastPosition: number, finished: boolean): void {
  if (!changes.length) return;
  const newest = plan.followUps.at(-1);
  if (newest?.step !== undefined && newest.step > lastPosition) newest.changedFiles = changes;
  // A change alone (/model, /compact after a stop) asks no model either: the next message tells them.
  else if (!finished && !plan.changesOnly)
    plan.followUps.push({
      message: '',
      changedFiles: changes,
      step: lastPosition + 1 + plan.configChanges.filter((change) => (change.step ?? 0) > lastPosition).length,
    });
}
