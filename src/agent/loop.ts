// The agent loop: ask the model, run each tool call it makes, hand back the results, repeat until
// it answers without a tool call; then take the next follow-up instruction, if there is one, and go
// on. Every model call, tool call and follow-up is a durable step, and the loop does not know (or
// care) whether a step ran live or was handed back from the journal: it rebuilds each request from
// the results `step` returns, so replay reproduces it exactly. No I/O of its own: the journal, the
// provider and the tools come in from the session; the valve has the run's checkpointer.
import type { RunJournal } from '../valve/run-journal.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import type { RunConfig } from '../journal/entry.js';
import type { AssistantBlock, ModelProvider, ModelResponse, ToolResultBlock, ToolUseBlock, UserBlock } from '../model/types.js';
import { toolResultBlock } from './result-block.js';
import type { AnyTool } from '../tools/types.js';
import { ellipsize, shortValue } from '../format/text.js';
import { Budget, type LimitReached, type Limits } from './budget.js';
import type { InFlightPolicy } from './in-flight.js';
import { ContextWindowError } from '../errors/index.js';
import { compact, isPromptTooLong, KEEP_TURNS, refusedTokens, type CompactReason } from './compaction.js';
import { Conversation } from './conversation.js';
import {
  continueText,
  invalidCallResult,
  MAX_CONTINUATIONS,
  MAX_TOKENS,
  notRunResults,
  PAUSE_TURN,
  REFUSAL,
  refusalText,
} from './stop-reasons.js';
import { callTool, type Approver, type PermissionCheck } from './tool-call.js';
import type { Hooks, PromptHookOutcome, StopHookOutcome } from './hooks.js';
import { oneAtATime, runCalls } from './concurrent-calls.js';
import type { LoopState } from '../valve/snapshot.js';

/** A follow-up instruction: recorded ones carry the step they were recorded at; a new one the step it may come first. */
export interface FollowUp {
  /** What the person said ('' when the step only tells of changed files). */
  message: string;
  /**
   * What the model is sent for `message` when it differs (a custom command, `@path` mentions): a
   * new follow-up's is recorded in the step's result, and a replay sends the recorded one.
   */
  sent?: string;
  /**
   * The files the person changed by hand since the run's last checkpoint, kept: the model is told
   * in this step's turn, and the step records the working tree as the run's next checkpoint.
   */
  changedFiles?: ChangedFile[];
  /**
   * The step that recorded it (the loop takes it exactly there on replay), or for a new one the
   * earliest step it may take: taken at the first model call at or after it, or after a final answer.
   */
  step?: number;
}

/** A file the person changed by hand: its path (as the checkpoints name it) and how. */
export interface ChangedFile {
  path: string;
  change: 'added' | 'deleted' | 'modified';
}

/**
 * A change within the run, recorded as a config step: a new model (`/model`, `--model` on
 * `continue`), or a compaction asked for (`/compact`). Recorded ones carry their step, a new one
 * the earliest step it may take.
 */
export interface ConfigChange {
  /** The model from this step on. */
  model?: string;
  /** Compact the conversation now (a compact step follows the config step). */
  compact?: boolean;
  /** As FollowUp's step: the step that recorded it, or for a new one the step it may come first. */
  step?: number;
}

/** What the agent loop needs to run one task through the journal. */
export interface AgentOptions {
  /** The run's valve, on any journal storage (git, or in memory in tests). */
  journal: RunJournal<JournalStorage>;
  task: string;
  /** What shapes every request: the run's pinned model, system prompt, tool definitions, max tokens, compaction and thinking. */
  config: RunConfig;
  /** Made on first use, so a run that only replays needs no credentials; asked with the model in use (it may change within the run). */
  provider: (model: string) => ModelProvider | Promise<ModelProvider>;
  /** The tools that run the model's calls (the model is shown the config's definitions). */
  tools: AnyTool[];
  /** Follow-up instructions in order: each is taken after a final answer (or at the first model call at or after its step). */
  followUps?: readonly FollowUp[];
  /** Changes in order, each a `config` step: taken before the next model call at or after its step, or after a final answer (before a follow-up). */
  configChanges?: readonly ConfigChange[];
  /**
   * Only changes were asked for, no message (`/model`, `/compact` alone): a run stopped in the
   * middle of its turn takes them and waits there, before its next model call, for the person's
   * next message, instead of going on without one.
   */
  changesOnly?: boolean;
  /** The user's limits (none by default): the loop stops cleanly before the step that would pass one. */
  limits?: Limits;
  /**
   * A session that holds its run (an interactive session): asked at a final answer with no
   * follow-up left, instead of returning. The loop waits, its conversation and counts as they
   * are, for the next message (and the changes that come with it); undefined ends it with `done`.
   * Read per call: `approve`, `permission`, `signal` and the streams may be another turn's by then.
   */
  hold?: (done: AgentOutcome) => Promise<NextMessage | undefined>;
  inFlight?: InFlightPolicy;
  /** Asked before a live tool call that needs approval; false records that the user declined it. */
  approve?: Approver;
  /** Settings' allow and deny rules, asked before `approve` (a deny holds over any approver). */
  permission?: PermissionCheck;
  /** Live model text as it streams. */
  onText?: (text: string) => void;
  /** Live extended thinking as it streams. */
  onThinking?: (text: string) => void;
  /** A live tool's output as it comes (run_bash). */
  onOutput?: (chunk: string) => void;
  signal?: AbortSignal;
  /**
   * The input a live tool call runs with, from the one the model wrote (recorded, redacted): turns
   * placeholders back into secret values. Pure to the loop; it may throw to stop before anything runs.
   */
  revealSecrets?: <V>(input: V) => V;
  /** The hooks in force (settings' `hooks`): each live step runs its event's hooks, and records their outcome with it. */
  hooks?: Hooks;
  /** What a hook decided that the person is told: a prompt blocked, or the model sent on by a Stop hook (also when replayed). */
  onHook?: (notice: HookNotice) => void;
}

/** What a hook decided, for the person: the prompt was blocked (not sent), or a Stop hook sent the model on. */
export type HookNotice = { event: 'UserPromptSubmit'; blocked: string } | { event: 'Stop'; block: string };

/** The step kind of the hooks of a step of their own (UserPromptSubmit on the task, which no other step records). */
export const HOOK_STEP_KIND = 'hook';

/** How many times in a row a Stop hook may send the model on before it is not asked again until the next message: a hook cannot keep a run going forever. */
export const MAX_STOP_BLOCKS = 3;
/** What a held loop is handed when the person sends the next message: the follow-up (if any) and the changes before it. */
export interface NextMessage {
  followUps: FollowUp[];
  configChanges: ConfigChange[];
}

/** How the loop ended: 'done' when the model answered without tools, 'limit' when one of the user's limits stopped it. */
export interface AgentOutcome {
  status: 'done' | 'limit';
  final: string;
  steps: number;
  /** Done without a final answer: only changes were asked of a run stopped in its turn (AgentOptions.changesOnly), which waits for a message. */
  waiting?: boolean;
  /** Which limit, when the status is 'limit'. */
  limit?: LimitReached;
  /** The final answer stopped as a refusal (stop reason "refusal"): the task was not done. */
  refused?: boolean;
}

/** The stop reason savepoint records for a request the API refused as longer than the context window. */
export const PROMPT_TOO_LONG = 'prompt_too_long';

/** The step kind of a change of the run's configuration within the run (today: its model). */
export const CONFIG_STEP_KIND = 'config';

/** The step kind of a follow-up instruction. */
export const USER_STEP_KIND = 'user';

/** Runs the task to its end (or to one of the user's limits), through the journal. */
export async function runAgent(options: AgentOptions): Promise<AgentOutcome> {
  const { journal, inFlight = 'report' } = options;
  // Where the run was opened from its snapshot: the loop's state just before a model call at that
  // step (valve/snapshot.ts). The loop goes on from there exactly as if it had been driven through
  // the steps before it; the valve hands back the recorded steps after it, as always.
  const start = journal.resumeState;
  // The pinned configuration, with the model the run's config steps changed to (replayed or live).
  let config = start ? { ...options.config, model: start.model } : options.config;
  const configChanges = [...(options.configChanges ?? [])];
  const provider = () => options.provider(config.model);
  // Steps are the valve's positions (one counter): the budget reads them, and counts model calls and cost.
  const budget = new Budget(options.limits, () => journal.position);
  const tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  const { hooks } = options;
  // Reads of one answer run at once: a question to the person (a read's too, from a rule) is asked
  // one at a time. Read at each call (getters): a held loop's next turn brings its own approver,
  // rules and signal.
  let approver: { of: Approver; once: Approver } | undefined;
  const context = {
    journal,
    tools,
    inFlight,
    get approve() {
      if (!options.approve) return undefined;
      if (approver?.of !== options.approve) approver = { of: options.approve, once: oneAtATime(options.approve) };
      return approver.once;
    },
    get permission() {
      return options.permission;
    },
    get signal() {
      return options.signal;
    },
    get onOutput() {
      return options.onOutput;
    },
    revealSecrets: options.revealSecrets,
    hooks,
  };
  const followUps = [...(options.followUps ?? [])];
  const conversation = new Conversation(config);
  // The Stop hooks that sent the model on since the person's last message (MAX_STOP_BLOCKS).
  let stopBlocks = start?.stopBlocks ?? 0;
  let final = start?.final ?? '';
  // A text answer cut off at max_tokens, waiting for its continuation, and how many in a row.
  let partial = start?.partial ?? '';
  let continuations = start?.continuations ?? 0;
  // The run's last follow-up (for a snapshot), and whether the conversation was compacted since the last offer of one.
  let lastFollowUp = start?.lastFollowUp;
  let compacted = false;
  const stopped = (limit: LimitReached): AgentOutcome => ({ status: 'limit', final: '', steps: budget.steps, limit });
  // The last tool results, added to the conversation just before the next model call, so that a
  // follow-up given while the run was stopped there can join them in the same user turn.
  let pending: UserBlock[] | undefined;
  if (start) {
    // The steps are the valve's, which starts at the snapshot's step; the rest is the loop's to restore.
    budget.turns = start.budget.turns;
    budget.cost = start.budget.cost;
    conversation.restore(start);
  } else {
    const task = await taskPrompt();
    if (task.blocked === undefined) conversation.add({ role: 'user', content: withContext(options.task, task.context) });
    else {
      // The task was not sent: the run's first message to the model is its next follow-up, if any.
      await takeConfigChanges();
      do if (followUps.length === 0) return { status: 'done', final: '', steps: budget.steps };
      while (!(await takeFollowUp()));
    }
  }

  // Started from a snapshot: its state is that of just before its turn's model call.
  let resumed = start !== undefined;
  for (let turn = start?.turn ?? 1; ; turn++) {
    let limit: LimitReached | undefined;
    if (resumed) resumed = false;
    else {
      // A follow-up recorded at this very step (it was given when the run had stopped here), or a new
      // one given to a run that stopped before its final answer: taken before the next model call.
      await takeConfigChanges();
      if (followUps[0]?.step !== undefined && followUps[0].step <= budget.steps + 1) {
        // A message a hook blocked is not sent: with nothing else for the model, the turn ends here.
        if (!(await takeFollowUp()) && !pending && conversation.messages.at(-1)?.role !== 'user')
          return { status: 'done', final: '', steps: budget.steps };
      }
      if (pending) conversation.add({ role: 'user', content: pending });
      pending = undefined;
      if ((limit = budget.exceeded(true))) return stopped(limit);
      // Everything recorded is handed back and the changes are taken: the next step would ask the
      // model, which only a message from the person may do here.
      if (options.changesOnly && configChanges.length === 0 && budget.steps >= journal.history.lastPosition)
        return { status: 'done', final: '', steps: budget.steps, waiting: true };
      if (conversation.nearsWindow) {
        await compactNow('threshold', conversation.tokens);
        if ((limit = budget.exceeded(true))) return stopped(limit);
      }
      options.signal?.throwIfAborted(); // stopped during the last tool call, recorded as stopped
    }
    // The state here is what a snapshot keeps: the valve writes one with this model call's entry
    // when it is due (every so many steps, and after a compaction, when the conversation is small).
    const at = turn;
    const steps = journal.position;
    journal.offerSnapshot(() => loopState(at, steps), compacted);
    compacted = false;
    const response = await modelStep(turn);
    budget.countModelCall({ name: response.model || config.model, usage: response.usage });
    if (response.stopReason === PROMPT_TOO_LONG) {
      // Recorded as the step's result, so replay compacts here too, without asking again.
      await compactNow('prompt-too-long', refusedTokens(response.refused, config.compaction.contextWindow));
      continue;
    }
    conversation.observe(response.usage);
    if (response.content.length) conversation.add({ role: 'assistant', content: response.content });
    const calls = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
    const cutOff = response.stopReason === MAX_TOKENS;
    const notRun = notRunResults(response, calls, config.maxTokens);
    if (notRun) {
      // Never run a call from a cut-off or refused answer: tell the model, deterministically from the record.
      pending = notRun;
      continue;
    }
    if (calls.length === 0 && response.stopReason === PAUSE_TURN && continuations < MAX_CONTINUATIONS) {
      // A paused turn is sent back as it is (already in the conversation): the model goes on from it.
      continuations++;
      continue;
    }
    if (calls.length === 0) {
      const whole = partial + rawText(response.content);
      final = response.stopReason === REFUSAL ? refusalText(whole.trim()) : whole.trim();
      if (cutOff && continuations < MAX_CONTINUATIONS && response.content.length) {
        partial = whole;
        continuations++;
        conversation.add({ role: 'user', content: continueText(config.maxTokens) });
        continue;
      }
      partial = '';
      continuations = 0;
      if (response.stopHook) {
        // A Stop hook sent the model on (recorded with this answer): its words are the next turn.
        stopBlocks++;
        options.onHook?.({ event: 'Stop', block: response.stopHook.block });
        conversation.add({ role: 'user', content: `[Stop hook] ${response.stopHook.block}` });
        continue;
      }
      // A change of model given after this answer comes before the follow-up it goes with.
      await takeConfigChanges();
      if (followUps.length === 0) {
        const done: AgentOutcome = {
          status: 'done',
          final,
          steps: budget.steps,
          ...(response.stopReason === REFUSAL ? { refused: true } : {}),
        };
        if (!(await heldUntilMessage(done))) return done;
      }
      if ((limit = budget.exceeded(false))) return stopped(limit);
      // A blocked message is not sent: the next one, if any, is; else the run ends with this answer.
      while (!(await takeFollowUp())) {
        if (followUps.length === 0) return { status: 'done', final, steps: budget.steps };
        if ((limit = budget.exceeded(false))) return stopped(limit);
      }
      continue;
    }

    // Reads run at the same time as their neighbours, any other call alone (concurrent-calls.ts);
    // the results come in call order, each call its own step, numbered in call order.
    const ran = await runCalls(calls, {
      concurrency: (call) => {
        const max = invalidCallResult(call, response) ? undefined : tools.get(call.name)?.maxConcurrent;
        return max !== undefined && max > 0 ? { tool: call.name, max } : undefined;
      },
      stopBefore: (call) => {
        if (invalidCallResult(call, response)) return undefined; // answered without a step
        // The calls started before this one have taken their positions (callTool asks for its step
        // before it awaits anything): the limit sees the steps still running.
        return budget.exceeded(false);
      },
      run: async (call, batch): Promise<ToolResultBlock> => {
        const invalid = invalidCallResult(call, response);
        if (invalid) return invalid;
        return toolResultBlock(call.id, await callTool(call, context, batch), config);
      },
    });
    if (ran.stopped) return stopped(ran.stopped);
    // Every tool_use gets its tool_result before the next request, also after a crash mid-answer.
    pending = ran.results;
  }

  // A held loop at its final answer: waits for the next message, taking the changes that come
  // alone (/model, /compact: the turn ends there again, with the same answer). False: no more.
  async function heldUntilMessage(done: AgentOutcome): Promise<boolean> {
    if (!options.hold) return false;
    for (;;) {
      const next = await options.hold(done);
      if (!next) return false;
      followUps.push(...next.followUps);
      configChanges.push(...next.configChanges);
      await takeConfigChanges();
      if (followUps.length) return true;
      done = { ...done, steps: budget.steps };
    }
  }

  // One model call as a step. With compaction on, the API's "prompt is too long" is recorded as
  // the step's result (no content) instead of failing the run: the loop compacts and asks again.
  // A final answer's Stop hooks run inside its step, after the model answered: their outcome is
  // recorded with the answer (replay hands it back), and a crash in one leaves the model call
  // unrecorded, made again with the hook.
  async function modelStep(turn: number): Promise<ModelResponse & { stopHook?: StopHookOutcome }> {
    const request = conversation.request();
    return journal.step<ModelResponse & { stopHook?: StopHookOutcome }>(
      'model',
      conversation.stepInput(turn),
      async () => {
        try {
          const response = await (
            await provider()
          ).complete(request, { onText: options.onText, onThinking: options.onThinking, signal: options.signal });
          const answers =
            !response.content.some((block) => block.type === 'tool_use') &&
            ![MAX_TOKENS, PAUSE_TURN, REFUSAL].includes(response.stopReason ?? '');
          if (!answers || !hooks?.has('Stop') || stopBlocks >= MAX_STOP_BLOCKS) return response;
          const stopHook = await hooks.stop(stopBlocks > 0);
          return stopHook ? { ...response, stopHook } : response;
        } catch (error) {
          if (!config.compaction.enabled || !isPromptTooLong(error)) throw error;
          const usage = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
          return {
            model: config.model,
            content: [],
            stopReason: PROMPT_TOO_LONG,
            usage,
            refused: error.data.apiMessage ?? 'prompt is too long',
          };
        }
      },
      { describe: `model turn ${turn}`, summarize: summarizeResponse, usage: (r) => r.usage },
    );
  }

  // Summarizes the conversation before its last turns (fewer of them each time the API still
  // refuses), as a compact step; stops the run when nothing is left to summarize and it must.
  async function compactNow(reason: CompactReason, tokensBefore: number): Promise<void> {
    const keepTurns = Math.max(1, KEEP_TURNS - conversation.compactionsInARow);
    const stuck = () => new ContextWindowError(journal.run, config.compaction.contextWindow, `${tokensBefore} tokens`);
    if (conversation.compactionsInARow >= 3) throw stuck();
    const done = await compact({ journal, config, task: options.task, provider, signal: options.signal }, conversation.messages, {
      reason,
      tokensBefore,
      keepTurns,
    });
    if (!done) {
      if (reason === 'prompt-too-long') throw stuck();
      return conversation.hold();
    }
    budget.countModelCall({ name: done.result.model || config.model, usage: done.result.usage });
    // A summary that could not stand for the turns (recorded, replayed here): they are kept whole.
    if (!done.messages) return conversation.hold();
    conversation.replace(done.messages, done.result.tokensAfter);
    compacted = true;
  }

  // The loop's state just before the model call of `turn` (see LoopState): what a snapshot keeps.
  // `steps`: the valve's position when it was offered (the model step after it is under way when it is taken).
  function loopState(turn: number, steps: number): LoopState {
    const { tokens, compactionsInARow, isSettled: settled } = conversation;
    return {
      turn,
      model: config.model,
      messages: [...conversation.messages],
      tokens,
      compactionsInARow,
      settled,
      budget: { steps, turns: budget.turns, cost: budget.cost },
      stopBlocks,
      final,
      partial,
      continuations,
      ...(lastFollowUp ? { lastFollowUp } : {}),
    };
  }

  // Records each change due by now (its step is the next one) as a config step of its own: a new
  // model is used from then on (replayed: the recorded one, so the requests after it are the ones
  // recorded); a compaction asked for is made right after it (replayed: from its compact step).
  async function takeConfigChanges(): Promise<void> {
    while (configChanges[0] && (configChanges[0].step === undefined || configChanges[0].step <= budget.steps + 1)) {
      const next = configChanges.shift()!;
      if (next.model !== undefined) {
        const model = next.model;
        const recorded = await journal.step(CONFIG_STEP_KIND, { model }, () => ({ model }), {
          describe: `config model ${shortValue(model, 40)}`,
          summarize: (r) => `model is now ${r.model}`,
        });
        config = { ...config, model: recorded.model };
        conversation.useModel(recorded.model);
      } else if (next.compact) {
        await journal.step(CONFIG_STEP_KIND, { compact: true }, () => ({ compact: true }), {
          describe: 'config compact',
          summarize: () => 'compaction asked for',
        });
        await compactNow('requested', conversation.tokens);
      }
    }
  }

  // Records the next follow-up as a step of its own and adds it to the conversation: after a final
  // answer as a new user turn, or (a run stopped between tool results and the next model call)
  // after those results in the same turn, so that every tool_use still has its tool_result first.
  // Says whether anything reached the conversation (a message a UserPromptSubmit hook blocked does
  // not: the hook's outcome is recorded with the step, and replay hands it back).
  async function takeFollowUp(): Promise<boolean> {
    const next = followUps.shift()!;
    // The files the person changed are part of the step's input: replay rebuilds the same turn.
    const changed = next.changedFiles?.length ? { changedFiles: next.changedFiles } : {};
    const input = { message: next.message, ...changed };
    // What the model is sent, when it is not the words typed, is the step's result: the step's
    // identity stays the words (a command file changed since does not change the step).
    type Recorded = { message: string; changedFiles?: ChangedFile[]; sent?: string } & PromptHookOutcome;
    const run = async (): Promise<Recorded> => {
      const result = next.sent !== undefined ? { ...input, sent: next.sent } : input;
      if (!next.message || !hooks?.has('UserPromptSubmit')) return result;
      // The hooks see what the model would be sent (a command's text, the files mentioned).
      return { ...result, ...(await hooks.userPromptSubmit(next.sent ?? next.message)) };
    };
    const recorded = await journal.step(USER_STEP_KIND, input, run, {
      describe:
        next.message || !changed.changedFiles
          ? `user "${shortValue(next.message, 40)}"`
          : `user (changed by hand: ${shortValue(changed.changedFiles.map((file) => file.path).join(', '), 40)})`,
      summarize: () =>
        !changed.changedFiles
          ? 'follow-up instruction'
          : `${next.message ? 'follow-up instruction, and ' : 'told the model of '}${changed.changedFiles.length} file(s) changed by hand`,
      // The person's files, kept: the tree now is the run's checkpoint, so the question is not asked again.
      ...(changed.changedFiles ? { checkpoint: true } : {}),
    });
    stopBlocks = 0;
    lastFollowUp = { message: next.message, step: budget.steps };
    if (recorded.blocked !== undefined) options.onHook?.({ event: 'UserPromptSubmit', blocked: recorded.blocked });
    const said = typeof recorded.sent === 'string' ? recorded.sent : recorded.message;
    const message = recorded.blocked !== undefined ? '' : withContext(said, recorded.context);
    const text = [handEditNote(recorded.changedFiles), message].filter(Boolean).join('\n\n');
    if (!text) return false;
    if (pending) pending = [...pending, { type: 'text', text }];
    else conversation.add({ role: 'user', content: text });
    return true;
  }

  // The task's UserPromptSubmit hooks, as a step of their own at the run's first position: in a run
  // that recorded one there (replayed, whatever the settings say now), or in a new run with such
  // hooks. A run recorded without one never gets one: its steps stay where they were.
  async function taskPrompt(): Promise<PromptHookOutcome> {
    const recorded = journal.history.kindAt(1);
    const due =
      recorded !== undefined ? recorded === HOOK_STEP_KIND : journal.history.lastPosition === 0 && Boolean(hooks?.has('UserPromptSubmit'));
    if (!due) return {};
    const outcome = await journal.step<PromptHookOutcome>(
      HOOK_STEP_KIND,
      { event: 'UserPromptSubmit', prompt: options.task },
      () => hooks?.userPromptSubmit(options.task) ?? {},
      {
        describe: 'hook UserPromptSubmit',
        summarize: (r) => (r.blocked !== undefined ? `blocked: ${shortValue(r.blocked, 40)}` : r.context ? 'context added' : 'went on'),
      },
    );
    if (outcome.blocked !== undefined) options.onHook?.({ event: 'UserPromptSubmit', blocked: outcome.blocked });
    return outcome;
  }
}

// A message with the context its UserPromptSubmit hooks added, for the model.
function withContext(message: string, context: string | undefined): string {
  return context ? `${message}\n\n[UserPromptSubmit hook] ${context}` : message;
}

/** What the model is told of the files the person changed by hand since its last step ('' for none). */
export function handEditNote(files: readonly ChangedFile[] | undefined): string {
  if (!files?.length) return '';
  const listed = files.map((file) => `${file.change} ${file.path}`).join(', ');
  return `[savepoint] Since your last step the person changed these files by hand: ${listed}. The working tree is as they left it; read a file again before relying on what you saw of it.`;
}

// The answer's text as it came (a cut-off answer's continuation goes on from its last character).
function rawText(content: AssistantBlock[]): string {
  return content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');
}

function textOf(content: AssistantBlock[]): string {
  return rawText(content).trim();
}

/** `calls read_file, run_bash` or `answers "All tests pass now."`, for the step line and commit subject. */
export function summarizeResponse(response: ModelResponse): string {
  if (response.stopReason === PROMPT_TOO_LONG) return `refused: ${response.refused ?? 'prompt is too long'}`;
  const cut = response.stopReason === MAX_TOKENS ? ' (cut off at max_tokens)' : response.stopReason === REFUSAL ? ' (refused)' : '';
  const calls = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use').map((b) => b.name);
  if (calls.length) return `calls ${calls.join(', ')}${cut}`;
  return `answers "${ellipsize(textOf(response.content).replace(/\s+/g, ' '), cut ? 24 : 50)}"${cut}`;
}
