// One tool call of the model's, as a durable step: an unknown tool is answered with an error the
// model can read; a known one asks for approval only when it goes live, records its intent first
// when it is not safe to repeat, and is checkpointed after when it may have changed files.
import type { RunJournal, StepBatch, StepChanges } from '../valve/run-journal.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import type { ToolUseBlock } from '../model/types.js';
import type { AnyTool, ToolResult } from '../tools/types.js';
import { inFlightAnswer, type InFlightPolicy } from './in-flight.js';
import type { Hooks } from './hooks.js';

/** Asked before a live tool call that needs approval: true runs it; false, or a reason, records that it was declined. */
export type Approver = (tool: AnyTool, input: Record<string, unknown>, asker?: ApprovalAsker) => Promise<boolean | { reason: string }>;

/** Who asks, when it is not the run itself: a subagent (its run, and the description its task call gave it). */
export interface ApprovalAsker {
  subagent: { run: string; description: string };
}

/**
 * The person's standing rules about a call (settings' allow and deny lists), asked before the
 * approver for every live call, reads included (a deny on reading `.env` stops a read_file of it):
 * 'deny' answers the model with an error and runs nothing (over --yes too), 'allow' runs it without
 * asking, undefined leaves it to the approver.
 */
export type PermissionCheck = (tool: string, input: Record<string, unknown>) => { verdict: 'allow' | 'deny'; rule: string } | undefined;

/** What one tool call needs from the loop around it. */
export interface ToolCallContext {
  /** The run's valve, on any journal storage (git, or in memory in tests). */
  journal: RunJournal<JournalStorage>;
  tools: ReadonlyMap<string, AnyTool>;
  inFlight: InFlightPolicy;
  approve?: Approver;
  /** Settings' allow and deny rules, asked before `approve`. */
  permission?: PermissionCheck;
  signal?: AbortSignal;
  /** A live tool's output as it comes (run_bash), for a live view. */
  onOutput?: (chunk: string) => void;
  /** Turns secret placeholders in a live call's input back into their values (see AgentOptions). */
  revealSecrets?: <V>(input: V) => V;
  /** The run's PreToolUse and PostToolUse hooks: run only when the call goes live, their outcome recorded with its step. */
  hooks?: Hooks;
}

/** The model's answer to a declined call, recorded in place of running it. */
export const DECLINED_RESULT: ToolResult = {
  isError: true,
  output: 'The user declined this tool call. Ask or try another way.',
  summary: 'declined by the user',
};

/** The declined result, with the user's reason for the model when they gave one. */
export function declinedResult(reason = ''): ToolResult {
  const why = reason.trim();
  if (!why) return DECLINED_RESULT;
  return {
    isError: true,
    output: `The user declined this tool call, saying: ${why}\nTake that into account: ask, or try another way.`,
    summary: `declined: ${why.length > 50 ? `${why.slice(0, 49)}…` : why}`,
  };
}

/** The model's answer to a call a deny rule refused, recorded in place of running it. */
export function deniedResult(rule: string): ToolResult {
  return {
    isError: true,
    output: `This tool call is not allowed here: the user's settings deny it (rule "${rule}"). It was not run. Try another way, or ask the user.`,
    summary: `denied by rule ${rule}`,
  };
}

/** The model's answer to a call a PreToolUse hook blocked (exit 2, or a "deny"), with what the hook said: recorded in place of running it. */
export function hookBlockedResult(reason: string): ToolResult {
  const why = reason.length > 50 ? `${reason.slice(0, 49)}…` : reason;
  return {
    isError: true,
    output: `This tool call was blocked by a PreToolUse hook, which said:\n${reason}\nIt was not run. Take that into account: try another way, or ask the user.`,
    summary: `blocked by a PreToolUse hook: ${why}`,
  };
}

/** A tool's result with what its PostToolUse hooks said beside it, for the model (the call has run). */
export function withHookFeedback(result: ToolResult, feedback: string | undefined): ToolResult {
  if (!feedback) return result;
  return {
    ...result,
    output: `${result.output}\n\n[PostToolUse hook] ${feedback}`,
    summary: `${result.summary} (a PostToolUse hook added feedback)`,
  };
}

/**
 * The model's answer to a call the person's stop cut off (Ctrl-C, SIGTERM or SIGHUP in an earlier
 * call of the same answer, or at this call's question): recorded in place of running it, so that
 * the next message reaches the model before anything left of the stopped turn runs.
 */
export const STOPPED_RESULT: ToolResult = {
  isError: true,
  output:
    'not run: stopped by the person. They stopped the turn before this call ran, so it was not run. Do not assume its effect; wait for what they say next.',
  summary: 'not run: stopped by the person',
};

/**
 * Runs (or replays) one tool call through the journal and returns its whole result; `batch` when it
 * runs beside other calls of its answer (concurrent-calls.ts). Its step is asked for before this
 * awaits anything, so calls started in order are numbered in order.
 */
export async function callTool(call: ToolUseBlock, context: ToolCallContext, batch?: StepBatch): Promise<ToolResult> {
  const { journal, signal } = context;
  const tool = context.tools.get(call.name);
  if (!tool) {
    // A name that is not a string is one a journal recorded before names were checked: never a crash on replay.
    const name = typeof call.name === 'string' ? call.name : String(call.name ?? '');
    const known = [...context.tools.keys()].join(', ');
    const result: ToolResult = {
      isError: true,
      output: `There is no tool named "${name}". The tools are: ${known}.`,
      summary: 'unknown tool',
    };
    return journal.step('unknown_tool', { name: call.name, input: call.input }, () => result, {
      describe: `unknown tool "${name.slice(0, 40)}"`,
      summarize: (r) => r.summary,
      ...(batch ? { batch } : {}),
    });
  }
  const input = call.input ?? {};
  // The step's identity and record keep what the model wrote; only the effect sees the secrets.
  let liveInput = input;
  // The person's answer to a live call (or to what it goes on to): undefined runs it, a result is
  // what the model is told instead (declined, or stopped at the question).
  const askPerson = async (asked: Record<string, unknown>): Promise<ToolResult | undefined> => {
    const answer = await context.approve!(tool, asked).catch((error: unknown) => {
      // Stopped at this call's question: answered as stopped, as the calls after it are.
      if (signal?.aborted) return 'stopped' as const;
      throw error;
    });
    if (answer === 'stopped') return STOPPED_RESULT;
    if (answer === true) return undefined;
    return declinedResult(typeof answer === 'object' ? answer.reason : '');
  };
  // What a live call goes on to (web_fetch's redirect to another domain), judged as the call was:
  // a deny rule wins, an allow rule skips the question (also with no terminal). Undefined: go on.
  const judge = async (asked: Record<string, unknown>): Promise<ToolResult | undefined> => {
    const ruled = context.permission?.(tool.name, asked);
    if (ruled?.verdict === 'deny') return deniedResult(ruled.rule);
    if (ruled?.verdict === 'allow' || !context.approve || !tool.needsApproval(asked)) return undefined;
    return askPerson(asked);
  };
  // An image the live call read: its bytes go into the journal beside the entry, never inside it.
  let imageBytes: Buffer | undefined;
  // The files a call that may change files changes, when it names them (an edit, a write): resolved
  // once the step is live (its approval, or its in-flight answer), so a replayed edit never
  // resolves its path, and handed down with the step for its checkpoint: the valve takes it with
  // the run's checkpointer and asks nothing back. Unnamed: the whole tree.
  const changed: StepChanges | undefined = tool.mayChangeFiles(input) ? {} : undefined;
  const live = () => {
    if (changed) changed.paths = tool.changedPaths?.(input);
  };
  const result = await journal.step<ToolResult>(
    tool.name,
    input,
    async (position) => {
      let result: ToolResult;
      // Each process group the call starts is recorded locally while it runs, so a later attempt
      // can stop a command a crash left running (never in the journal: pids mean nothing elsewhere).
      const groups: number[] = [];
      const onSpawn = (pid: number) => (groups.push(pid), journal.commands.track(pid, tool.describe(input)));
      try {
        // Stopped by the person (Ctrl-C, SIGTERM, SIGHUP): a command's group is stopped and its
        // result says so; it is recorded like any result. Only a step whose process died with it is in flight.
        const { imageBytes: bytes, ...recorded } = await tool.execute(liveInput, {
          signal,
          onSpawn,
          onOutput: context.onOutput,
          step: position,
          judge,
        });
        imageBytes = bytes;
        result = recorded;
      } finally {
        for (const pid of groups) journal.commands.untrack(pid); // execute returns once its group is gone
      }
      // After the effect, before the result is recorded: the hooks' outcome is part of the result,
      // so replay hands it back; a crash in a hook leaves the step in flight, like a crash in the call.
      if (!context.hooks?.has('PostToolUse', tool.name)) return result;
      return withHookFeedback(
        result,
        await context.hooks.postToolUse(tool.name, input, { output: result.output, is_error: result.isError }),
      );
    },
    {
      // Asked only when the step goes live: a replayed step never looks at the files.
      // A call with PostToolUse hooks is not safe to repeat either (the hooks' effects): a crash in
      // it leaves the step in flight for the in-flight rules, never a silent second run.
      intent: () => !tool.isRepeatSafe(input) || Boolean(context.hooks?.has('PostToolUse', tool.name)),
      // An effect whose reach is known files of this working tree (an edit, a write) is restored
      // from the checkpoint elsewhere; any other one-shot effect (a command, an MCP call) is fenced.
      fence: () => !tool.isRepeatSafe(input) && changed?.paths === undefined, // asked after decline: the paths are known
      describe: tool.describe(input),
      summarize: (r) => r.summary,
      onInFlight: (step) => (live(), inFlightAnswer(context.inFlight, step)),
      decline: async () => {
        live();
        // Stopped before this call began (an earlier call of the answer was stopped): it never
        // runs, not even on the next message; the model hears so, from the record on replay too.
        if (signal?.aborted) return { result: STOPPED_RESULT };
        // Only a live step gets here, before its intent is recorded, whatever the tool (a read
        // too: it needs no approval, but a deny rule may still forbid it). A deny rule wins over
        // everything; an allow rule skips the question (also with no terminal to ask on).
        const ruled = context.permission?.(tool.name, input);
        if (ruled?.verdict === 'deny') return { result: deniedResult(ruled.rule) };
        // PreToolUse hooks, given the input as the model wrote it (placeholders, not secrets): a
        // block is recorded as the call's result; "ask" asks even where a rule or the tool would
        // not; "allow" skips the question (a deny rule has already had its say).
        const hook = context.hooks?.has('PreToolUse', tool.name) ? await context.hooks.preToolUse(tool.name, input) : {};
        if (signal?.aborted) return { result: STOPPED_RESULT };
        if (hook.decision === 'deny') return { result: hookBlockedResult(hook.reason ?? 'blocked by a PreToolUse hook') };
        // An unknown secret stops it with nothing written.
        if (context.revealSecrets) liveInput = context.revealSecrets(input);
        if (hook.decision === 'allow' || !context.approve) return undefined;
        if (hook.decision !== 'ask' && (ruled?.verdict === 'allow' || !tool.needsApproval(input))) return undefined;
        const answer = await askPerson(input);
        return answer ? { result: answer } : undefined;
      },
      // A call that may change files: its checkpoint, taken by the run's checkpointer (the valve
      // has it), of the files it changed when it names them (an edit, a write), else the whole tree.
      ...(changed ? { checkpoint: true, changed } : {}),
      blobs: (r) => (r.image && imageBytes ? [imageBytes] : []),
      ...(batch ? { batch } : {}),
    },
  );
  // The image's bytes for the model, from the journal's blob: the same bytes live and on replay.
  if (!result.image) return result;
  return { ...result, imageBytes: imageBytes ?? (await journal.store.objects.read(result.image.blob, 'blob')) };
}
