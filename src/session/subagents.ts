// Subagents: the runs a parent's `task` calls start, driven in the parent's process. Each is a run
// of its own on the same journal branch (its own run lock, entries and run.json, with its lineage to
// the parent's step), named after that step, so the identical command finds it again: a finished
// one answers from its run.json (no request is sent again), an unfinished one replays its recorded
// steps and goes on from its first unfinished one, exactly as a resumed run does.
//
// One working tree for the parent and all its subagents. The steps that may change files (a
// write, an edit, a command), from the moment they start until their checkpoint is taken, hold one
// lock of the parent's process (worktree/checkpointer.ts), so each checkpoint's diff is that step's
// own work (`show` as for any step); model calls and reads overlap freely. The parent's task step
// takes its checkpoint under the same lock once its subagent answered, so the parent's own
// checkpoints follow the tree too. Each run's valve is handed its checkpointer when it opens.
//
// A subagent's approvals are asked through the parent's approver one at a time, labelled with the
// subagent; its rules, sandbox, MCP servers, secrets and model provider are the parent's.
import { runAgent } from '../agent/loop.js';
import type { Approver, PermissionCheck } from '../agent/tool-call.js';
import type { InFlightPolicy } from '../agent/in-flight.js';
import { StoppedBySignalError, stopSignalWords } from '../errors/index.js';
import type { RunConfig, RunSandbox } from '../journal/entry.js';
import { subagentRunId } from '../journal/run-id.js';
import { JournalStore } from '../journal/store.js';
import type { ModelProvider } from '../model/types.js';
import type { openRunSecrets } from '../redact/run-secrets.js';
import { toolOk } from '../tools/define-tool.js';
import type { SubagentRequest } from '../tools/task.js';
import type { AnyTool, ToolResult } from '../tools/types.js';
import { openRun, type OpeningRun } from '../valve/open-journal.js';
import type { RunJournal } from '../valve/run-journal.js';
import { FileStepLock, WorktreeCheckpointer, type HeldStep } from '../worktree/checkpointer.js';
import { WorktreeSnapshotter } from '../worktree/snapshot.js';
import type { SessionEvent } from './types.js';
import { ellipsize } from '../format/text.js';

/** The tool a subagent never gets: it starts no subagents of its own. */
export const TASK_TOOL = 'task';

/** What the parent's session lends its subagents, once its run is open and pinned. */
export interface SubagentParent {
  /** The parent's journal store (its repository; each subagent opens its own store on it, as another process would). */
  store: JournalStore;
  run: string;
  /** The parent's pinned configuration: a new subagent's, minus the task tool (a subagent created before keeps its own). */
  config: RunConfig;
  /** The parent's tools, built-in and MCP: a subagent gets them all but `task` (it starts no subagents of its own). */
  tools: readonly AnyTool[];
  /** Held by every step that may change files, from its start to its checkpoint, in the parent and its subagents. */
  files: FileStepLock;
  provider: (model: string) => ModelProvider | Promise<ModelProvider>;
  sandbox: () => RunSandbox;
  secrets: ReturnType<typeof openRunSecrets>;
  approve?: Approver;
  permission?: PermissionCheck;
  inFlight?: InFlightPolicy;
  signal?: AbortSignal;
  emit: (event: SessionEvent) => void;
}

/**
 * The parent's subagents: the approval queue, and how one is driven. Made once the parent's run is
 * pinned, with what they inherit of it (SubagentParent); the parent's task tool is made after them.
 */
export class Subagents {
  private readonly files: FileStepLock;
  // One question at a time in the parent's terminal.
  private questions: Promise<unknown> = Promise.resolve();

  constructor(private readonly parent: SubagentParent) {
    this.files = parent.files;
  }

  /** Drives (or resumes) the subagent of the task call at `request.step` to its final answer. */
  async run(request: SubagentRequest): Promise<ToolResult> {
    const { parent } = this;
    const run = subagentRunId(parent.run, request.step);
    const label = { run, description: request.description };
    // A store of its own (its object store, its tip): its appends race the parent's as another process's would.
    const store = await JournalStore.open(parent.store.repo);
    const snapshotter = new WorktreeSnapshotter(store.repo, store.objects, {
      redactText: parent.secrets.redactor.text,
      recordName: parent.secrets.recordName,
    });
    const pinned = parent.config;
    // The lock a file-changing step of the subagent takes when it starts, released by its checkpoint.
    const held: HeldStep = {};
    const opening = await openRun(store, {
      run,
      task: request.prompt,
      model: pinned.model,
      lineage: { parentRun: parent.run, parentStep: request.step, description: request.description },
      onEvent: (event) => parent.emit({ type: 'subagent', ...label, parentStep: request.step, event }),
      redact: parent.secrets.redactor.value,
      checkpointer: new WorktreeCheckpointer(snapshotter, this.files, held),
    });
    const journal = await this.pin(opening, pinned, snapshotter);
    // The parent's sandbox, settled before its loop started this task call: this attempt's in run.json.
    journal.record.useSandbox(parent.sandbox());
    try {
      const record = journal.record.current;
      // Finished before: its answer from run.json, nothing asked again.
      if (record?.status === 'finished') return answer(record.final ?? '', record.refused === true);
      const tools = parent.tools.filter((tool) => tool.name !== TASK_TOOL).map((tool) => this.lockedTool(tool, held));
      const outcome = await runAgent({
        journal,
        task: request.prompt,
        config: journal.config!,
        provider: parent.provider,
        tools,
        inFlight: parent.inFlight,
        approve: parent.approve ? (tool, input) => this.ask(() => parent.approve!(tool, input, { subagent: label })) : undefined,
        permission: parent.permission,
        revealSecrets: parent.secrets.revealer.value,
        signal: request.signal ?? parent.signal,
      });
      await journal.finish('finished', { final: outcome.final, ...(outcome.refused ? { refused: true } : {}) });
      return answer(outcome.final, outcome.refused === true);
    } catch (error) {
      const signal = request.signal ?? parent.signal;
      if (signal?.aborted) {
        const reason = signal.reason;
        await journal.record
          .markInterrupted(reason instanceof StoppedBySignalError ? stopSignalWords(reason.data.signal) : 'aborted')
          .catch(() => {});
      } else {
        await journal.finish('failed', { error: (error as Error).message }).catch(() => {});
      }
      throw error;
    } finally {
      journal.close();
      setImmediate(() => void store.objects.rollup.tidy().catch(() => undefined));
    }
  }

  // What the subagent's run records: the parent's pinned configuration, minus the task tool (a
  // subagent created before keeps its own), and a new one's start checkpoint, taken whole-step.
  private async pin(opening: OpeningRun<JournalStore>, pinned: RunConfig, snapshotter: WorktreeSnapshotter): Promise<RunJournal> {
    try {
      const config = opening.record?.config ?? { ...pinned, tools: pinned.tools.filter((tool) => tool.name !== TASK_TOOL) };
      const startCheckpoint = opening.isNew ? await this.files.holding(() => snapshotter.snapshot().tree) : undefined;
      return await opening.pin({ config, ...(startCheckpoint !== undefined ? { startCheckpoint } : {}) });
    } catch (error) {
      opening.release();
      throw error;
    }
  }

  // A subagent's question waits for the one before it to be answered.
  private ask<T>(question: () => Promise<T>): Promise<T> {
    const asked = this.questions.then(question, question);
    this.questions = asked.catch(() => undefined);
    return asked;
  }

  // The tool as the subagent runs it: a call that may change files takes the file-step lock when it
  // starts; the subagent's checkpoint after it releases it (held.release).
  private lockedTool(tool: AnyTool, held: HeldStep): AnyTool {
    return Object.assign(Object.create(tool) as AnyTool, {
      execute: async (input: Record<string, unknown>, context: Parameters<AnyTool['execute']>[1]) => {
        if (!tool.mayChangeFiles(input)) return tool.execute(input, context);
        held.release = await this.files.acquire();
        try {
          return await tool.execute(input, context);
        } catch (error) {
          held.release?.();
          held.release = undefined;
          throw error;
        }
      },
    });
  }
}

// The subagent's final answer as the task call's result.
function answer(final: string, refused: boolean): ToolResult {
  const result = toolOk(final || '(the subagent gave no final answer)', `answered "${ellipsize(final.replace(/\s+/g, ' ').trim(), 40)}"`);
  return refused ? { ...result, isError: true, summary: 'the subagent refused' } : result;
}
