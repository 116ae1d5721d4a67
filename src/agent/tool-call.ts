// One tool call of the model's, as a durable step: an unknown tool is answered with an error the
// model can read; a known one asks for approval only when it goes live, records its intent first
// when it is not safe to repeat, and is checkpointed after when it may have changed files.
import type { Checkpoint, RunJournal } from '../valve/run-journal.js';
import type { ToolUseBlock } from '../model/types.js';
import type { AnyTool, ToolResult } from '../tools/types.js';
import { inFlightAnswer, type InFlightPolicy } from './in-flight.js';

/** Asked before a live tool call that needs approval: true runs it; false, or a reason, records that it was declined. */
export type Approver = (tool: AnyTool, input: Record<string, unknown>) => Promise<boolean | { reason: string }>;

/**
 * The person's standing rules about a call (settings' allow and deny lists), asked before the
 * approver for every live call, reads included (a deny on reading `.env` stops a read_file of it):
 * 'deny' answers the model with an error and runs nothing (over --yes too), 'allow' runs it without
 * asking, undefined leaves it to the approver.
 */
export type PermissionCheck = (tool: string, input: Record<string, unknown>) => { verdict: 'allow' | 'deny'; rule: string } | undefined;

/** What one tool call needs from the loop around it. */
export interface ToolCallContext {
  journal: RunJournal;
  tools: ReadonlyMap<string, AnyTool>;
  inFlight: InFlightPolicy;
  approve?: Approver;
  /** Settings' allow and deny rules, asked before `approve`. */
  permission?: PermissionCheck;
  signal?: AbortSignal;
  /** A live tool's output as it comes (run_bash), for a live view. */
  onOutput?: (chunk: string) => void;
  /** The checkpoint after a call that may change files; `paths`: the files it changed, when it knows them. */
  checkpoint?: (paths?: string[]) => Checkpoint | undefined | Promise<Checkpoint | undefined>;
  /** Turns secret placeholders in a live call's input back into their values (see AgentOptions). */
  revealSecrets?: <V>(input: V) => V;
}

/** The model's answer to a declined call, recorded in place of running it. */
export const DECLINED_RESULT: ToolResult = { isError: true, output: 'The user declined this tool call. Ask or try another way.', summary: 'declined by the user' };

/** The declined result, with the user's reason for the model when they gave one. */
export function declinedResult(reason = ''): ToolResult {
  const why = reason.trim();
  if (!why) return DECLINED_RESULT;
  return { isError: true, output: `The user declined this tool call, saying: ${why}\nTake that into account: ask, or try another way.`, summary: `declined: ${why.length > 50 ? `${why.slice(0, 49)}…` : why}` };
}

/** The model's answer to a call a deny rule refused, recorded in place of running it. */
export function deniedResult(rule: string): ToolResult {
  return { isError: true, output: `This tool call is not allowed here: the user's settings deny it (rule "${rule}"). It was not run. Try another way, or ask the user.`, summary: `denied by rule ${rule}` };
}

/**
 * The model's answer to a call the person's stop cut off (Ctrl-C, SIGTERM or SIGHUP in an earlier
 * call of the same answer, or at this call's question): recorded in place of running it, so that
 * the next message reaches the model before anything left of the stopped turn runs.
 */
export const STOPPED_RESULT: ToolResult = {
  isError: true,
  output: 'not run: stopped by the person. They stopped the turn before this call ran, so it was not run. Do not assume its effect; wait for what they say next.',
  summary: 'not run: stopped by the person',
};

/** Runs (or replays) one tool call through the journal and returns its whole result. */
export async function callTool(call: ToolUseBlock, context: ToolCallContext): Promise<ToolResult> {
  const { journal, signal } = context;
  const tool = context.tools.get(call.name);
  if (!tool) {
    // A name that is not a string is one a journal recorded before names were checked: never a crash on replay.
    const name = typeof call.name === 'string' ? call.name : String(call.name ?? '');
    const known = [...context.tools.keys()].join(', ');
    const result: ToolResult = { isError: true, output: `There is no tool named "${name}". The tools are: ${known}.`, summary: 'unknown tool' };
    return journal.step('unknown_tool', { name: call.name, input: call.input }, () => result, { describe: `unknown tool "${name.slice(0, 40)}"`, summarize: (r) => r.summary });
  }
  const input = call.input ?? {};
  // The step's identity and record keep what the model wrote; only the effect sees the secrets.
  let liveInput = input;
  // Only a live step gets here, before its intent is recorded, whatever the tool (a read too: it
  // needs no approval, but a deny rule may still forbid it), and again for what a live call goes on
  // to (web_fetch's redirect to another domain). A deny rule wins over everything; an allow rule
  // skips the question (also with no terminal to ask on). Undefined: go on.
  const judge = async (asked: Record<string, unknown>, allowed?: () => void): Promise<ToolResult | undefined> => {
    const ruled = context.permission?.(tool.name, asked);
    if (ruled?.verdict === 'deny') return deniedResult(ruled.rule);
    allowed?.();
    if (ruled?.verdict === 'allow' || !context.approve || !tool.needsApproval(asked)) return undefined;
    const answer = await context.approve(tool, asked).catch((error: unknown) => {
      // Stopped at this call's question: answered as stopped, as the calls after it are.
      if (signal?.aborted) return 'stopped' as const;
      throw error;
    });
    if (answer === 'stopped') return STOPPED_RESULT;
    if (answer === true) return undefined;
    return declinedResult(typeof answer === 'object' ? answer.reason : '');
  };
  // An image the live call read: its bytes go into the journal beside the entry, never inside it.
  let imageBytes: Buffer | undefined;
  const result = await journal.step<ToolResult>(
    tool.name,
    input,
    async () => {
      // Each process group the call starts is recorded locally while it runs, so a later attempt
      // can stop a command a crash left running (never in the journal: pids mean nothing elsewhere).
      const groups: number[] = [];
      const onSpawn = (pid: number) => (groups.push(pid), journal.trackCommand(pid, tool.describe(input)));
      try {
        // Stopped by the person (Ctrl-C, SIGTERM, SIGHUP): a command's group is stopped and its
        // result says so; it is recorded like any result. Only a step whose process died with it is in flight.
        const { imageBytes: bytes, ...recorded } = await tool.execute(liveInput, { signal, onSpawn, onOutput: context.onOutput, judge: (further) => judge(further) });
        imageBytes = bytes;
        return recorded;
      } finally {
        for (const pid of groups) journal.untrackCommand(pid); // execute returns once its group is gone
      }
    },
    {
      // Asked only when the step goes live: a replayed step never looks at the files.
      intent: () => !tool.isRepeatSafe(input),
      // An effect whose reach is known files of this working tree (an edit, a write) is restored
      // from the checkpoint elsewhere; any other one-shot effect (a command, an MCP call) is fenced.
      fence: () => !tool.isRepeatSafe(input) && tool.changedPaths?.(input) === undefined,
      describe: tool.describe(input),
      summarize: (r) => r.summary,
      onInFlight: (step) => inFlightAnswer(context.inFlight, step),
      decline: async () => {
        // Stopped before this call began (an earlier call of the answer was stopped): it never
        // runs, not even on the next message; the model hears so, from the record on replay too.
        if (signal?.aborted) return { result: STOPPED_RESULT };
        // An unknown secret stops it with nothing written.
        const result = await judge(input, () => {
          if (context.revealSecrets) liveInput = context.revealSecrets(input);
        });
        return result ? { result } : undefined;
      },
      checkpoint: context.checkpoint && tool.mayChangeFiles(input) ? () => context.checkpoint!(tool.changedPaths?.(input)) : undefined,
      blobs: (r) => (r.image && imageBytes ? [imageBytes] : []),
    },
  );
  // The image's bytes for the model, from the journal's blob: the same bytes live and on replay.
  if (!result.image) return result;
  return { ...result, imageBytes: imageBytes ?? (await journal.store.objects.read(result.image.blob, 'blob')) };
}
