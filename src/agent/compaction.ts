// Compaction as a durable step: when the conversation nears the model's context window (measured
// from the usage each response reported), or the API refused a request as too long, one model call
// summarizes the messages before the last turns, and the conversation goes on from the task, that
// summary and those turns, kept whole. The call is a journaled step of kind `compact` like any
// other, so replay hands its summary back and re-sends nothing. The journal keeps every original
// result whole; only what the model is sent next gets shorter. A summary call that answers with
// no summary (nothing, or tool calls) is asked again once, then the run stops saying so: the turns
// are never replaced by an empty or unusable summary. Pure code: the step comes in.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../valve/key.js';
import type { RunJournal } from '../valve/run-journal.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import { ContextWindowError, ModelError, UnusableSummaryError } from '../errors/index.js';
import { ellipsize } from '../format/text.js';
import type { RunConfig } from '../journal/entry.js';
import { COMPACT_INSTRUCTION, summarizedTurns, summaryMessage } from '../model/compaction.js';
import type { Message, ModelProvider, ModelRequest, ModelResponse, Usage, UserBlock } from '../model/types.js';

/** The step kind of a compaction. */
export const COMPACT_STEP_KIND = 'compact';

/** The model turns kept whole after a compaction (fewer when the API still finds the prompt too long). */
export const KEEP_TURNS = 2;

/** Why a compaction ran. */
export type CompactReason = 'threshold' | 'prompt-too-long' | 'requested';

/** What a compact step records: the summary, and the conversation's size before and after. */
export interface CompactResult {
  summary: string;
  /** Tokens of the conversation before: as the last response (or the API's refusal) reported them. */
  tokensBefore: number;
  /** Tokens after, estimated from tokensBefore in proportion to the request's length. */
  tokensAfter: number;
  /** Messages summarized, and kept whole after the summary. */
  summarizedMessages: number;
  keptMessages: number;
  model: string;
  stopReason: string;
  usage: Usage;
  /**
   * Set when the summary call answered twice with no summary (what it answered each time: "nothing",
   * "a call of read_file"): nothing was replaced, every turn is kept, and `summary` is ''. Recorded
   * so that a replay keeps the turns too and goes on, where the live run stopped.
   */
  unusable?: string[];
}

/** The tokens a response says the conversation holds now: its input (cached or not) plus its answer. */
export function contextTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens + usage.outputTokens;
}

/** True for the API's 400 "prompt is too long" (the request no longer fits the context window). */
export function isPromptTooLong(error: unknown): error is ModelError {
  return error instanceof ModelError && error.data.status === 400 && /prompt is too long/i.test(error.data.apiMessage ?? '');
}

/** The prompt's size in tokens as the API's refusal states it ("prompt is too long: 212345 tokens > 200000 maximum"). */
export function refusedTokens(message: string | undefined, fallback: number): number {
  const match = /(\d+)\s*tokens?\s*>/.exec(message ?? '');
  return match ? Number(match[1]) : fallback;
}

/** Where to cut: the index of the assistant message that starts the kept turns, or undefined when nothing can be summarized. */
export function cutIndex(messages: readonly Message[], keepTurns: number): number | undefined {
  let seen = 0;
  for (let i = messages.length - 1; i > 1; i--) {
    if (messages[i]!.role !== 'assistant') continue;
    if (++seen === keepTurns) return i;
  }
  // Fewer turns than asked: keep the last one, if anything lies before it.
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  return seen > 0 && last > 1 ? last : undefined;
}

/** What one compaction needs from the loop. */
export interface CompactContext {
  /** The run's valve, on any journal storage (git, or in memory in tests). */
  journal: RunJournal<JournalStorage>;
  config: RunConfig;
  task: string;
  provider: () => ModelProvider | Promise<ModelProvider>;
  signal?: AbortSignal;
}

/**
 * Compacts `messages` through the journal; returns the new conversation and the recorded result,
 * or undefined when there is nothing to summarize. A summary call that answered with no summary
 * (twice) replaces nothing: live, it stops the run (UnusableSummaryError) once its result is
 * recorded; replayed, it hands back no messages, and the turns go on whole.
 */
export async function compact(
  context: CompactContext,
  messages: readonly Message[],
  options: { reason: CompactReason; tokensBefore: number; keepTurns: number },
): Promise<{ messages?: Message[]; result: CompactResult } | undefined> {
  const { journal, config } = context;
  const cut = cutIndex(messages, options.keepTurns);
  if (cut === undefined) return undefined;
  const request = summaryRequest(config, messages, cut);
  const digest = createHash('sha256').update(canonicalJson(request)).digest('hex').slice(0, 24);
  const turns = summarizedTurns(messages) + messages.slice(0, cut).filter((m) => m.role === 'assistant').length;
  const input = { model: config.model, request: digest, summarize: cut, reason: options.reason, tokensBefore: options.tokensBefore };
  // Whether the step ran now (not handed back by replay): only then does an unusable summary stop the run.
  let live = false;
  const result = await journal.step<CompactResult>(
    COMPACT_STEP_KIND,
    input,
    async () => {
      live = true;
      const { response, unusable, usage } = await usableSummary(context, request);
      if (unusable) {
        const { tokensBefore } = options;
        return {
          summary: '',
          tokensBefore,
          tokensAfter: tokensBefore,
          summarizedMessages: 0,
          keptMessages: messages.length,
          model: response.model,
          stopReason: response.stopReason,
          usage,
          unusable,
        };
      }
      const summary = textOf(response);
      const after = [summaryMessage(context.task, summary, turns), ...messages.slice(cut)];
      return {
        summary,
        tokensBefore: options.tokensBefore,
        tokensAfter: estimateAfter(config, messages, after, options.tokensBefore),
        summarizedMessages: cut,
        keptMessages: messages.length - cut,
        model: response.model,
        stopReason: response.stopReason,
        usage,
      };
    },
    {
      describe: `compact: ${{ threshold: 'near the window', 'prompt-too-long': 'prompt too long', requested: 'asked for' }[options.reason]}`,
      summarize: (r) =>
        r.unusable
          ? `not compacted: asked twice, the model answered with ${r.unusable.join(', then ')}; every turn kept`
          : `${r.tokensBefore.toLocaleString('en-US')} → ${r.tokensAfter.toLocaleString('en-US')} tokens (estimated): ${summaryWords(r.summary)} for ${r.summarizedMessages} messages`,
      usage: (r) => r.usage,
    },
  );
  if (result.unusable) {
    if (live) throw new UnusableSummaryError(journal.run, result.unusable);
    return { result };
  }
  return { messages: [summaryMessage(context.task, result.summary, turns), ...messages.slice(cut)], result };
}

// The summarization request: the messages before the cut, the instruction added to the last of
// them (always a user message: the cut is at an assistant one), with the run's own system prompt
// and tools so that the API's prompt cache serves the shared beginning.
function summaryRequest(config: RunConfig, messages: readonly Message[], cut: number): ModelRequest {
  const before = messages.slice(0, cut);
  const last = before.pop()!;
  const blocks: UserBlock[] =
    typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...(last.content as UserBlock[])];
  blocks.push({ type: 'text', text: COMPACT_INSTRUCTION });
  return {
    model: config.model,
    system: config.system,
    messages: [...before, { role: 'user', content: blocks }],
    tools: config.tools,
    maxTokens: config.maxTokens,
    ...(config.thinking ? { thinking: config.thinking } : {}),
  };
}

// The summary call, asked once more when its answer is no summary (no text, or tool calls: a
// model that goes on working instead of summarizing); a second such answer stops the run, so that
// the turns are never replaced by an empty or made-up summary.
// Both calls' usage is the step's: each was paid for.
async function usableSummary(
  context: CompactContext,
  request: ModelRequest,
): Promise<{ response: ModelResponse; usage: Usage; unusable?: string[] }> {
  const answers: string[] = [];
  let usage: Usage = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
  for (;;) {
    const response = await summarize(context, request);
    usage = addUsage(usage, response.usage);
    const unusable = whyUnusable(response);
    if (!unusable) return { response, usage };
    answers.push(unusable);
    if (answers.length === 2) return { response, usage, unusable: answers };
  }
}

function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  };
}

/** Why a summary call's answer cannot stand for the turns it summarizes, or undefined when it can. */
export function whyUnusable(response: ModelResponse): string | undefined {
  const calls = response.content.filter((b) => b.type === 'tool_use').map((b) => (b as { name: string }).name);
  if (calls.length) return `a call of ${calls.join(' and ')}`;
  if (!textOf(response)) return 'nothing';
  return undefined;
}

// What the step line says the summary kept: its first words and its length.
function summaryWords(summary: string): string {
  const text = summary.replace(/\s+/g, ' ').trim();
  return `"${ellipsize(text, 32).replace(/\s+\u2026$/, '…')}" (${text.length.toLocaleString('en-US')} characters)`;
}

// The summary call; when even the summarized part is too long for the API, its tool results are
// cut harder (to 2,000, then 200 characters each) and it is asked again, within this one step.
async function summarize(context: CompactContext, request: ModelRequest): Promise<ModelResponse> {
  const provider = await context.provider();
  let refusal = '';
  for (const shorten of [0, 2_000, 200]) {
    const attempt = shorten
      ? { ...request, messages: request.messages.map((m) => (m.role === 'user' ? shortenResults(m, shorten) : m)) }
      : request;
    try {
      return await provider.complete(attempt, { signal: context.signal });
    } catch (error) {
      if (!isPromptTooLong(error)) throw error;
      refusal = error.data.apiMessage ?? '';
    }
  }
  throw new ContextWindowError(context.journal.run, context.config.compaction.contextWindow, refusal);
}

function shortenResults(message: Message & { role: 'user' }, max: number): Message {
  if (typeof message.content === 'string') return message;
  const content = message.content.map((b) => {
    if (b.type !== 'tool_result') return b;
    // A result with images is summarized from its text: each image's line says what it was.
    const text = typeof b.content === 'string' ? b.content : b.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    if (text.length > max) return { ...b, content: `${text.slice(0, max)}\n[... cut for the summary; the journal keeps it whole]` };
    return typeof b.content === 'string' ? b : { ...b, content: text };
  });
  return { role: 'user', content };
}

// tokensBefore scaled by how much shorter the request became (system prompt and tools included).
function estimateAfter(config: RunConfig, before: readonly Message[], after: readonly Message[], tokensBefore: number): number {
  const size = (messages: readonly Message[]) => JSON.stringify({ system: config.system, tools: config.tools, messages }).length;
  return Math.round((tokensBefore * size(after)) / Math.max(1, size(before)));
}

function textOf(response: ModelResponse): string {
  return response.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n')
    .trim();
}
