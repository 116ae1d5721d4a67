// Turning one scripted turn into a model response, deterministically: the same turn, position and
// request size always give the same answer, ids and usage. Shared by the scripted provider and the
// fake Anthropic server in the tests, so both answer a script the same way.
import { createHash } from 'node:crypto';
import type { AssistantBlock, ModelResponse } from './types.js';
import type { ScriptTurn } from './script-file.js';
import { summarizedTurns } from './compaction.js';

/**
 * Which turn a request asks for: one per assistant message already in the conversation (plus the
 * turns a compaction summarized), so a process that resumes a run at turn k is answered with turn
 * k, with no state kept anywhere.
 */
export function turnIndex(messages: readonly { role: string; content?: unknown }[]): number {
  return (
    summarizedTurns(messages as { role: string; content: unknown }[]) + messages.filter((message) => message.role === 'assistant').length
  );
}

/** The answer to a compaction request: the script's `summary`, else one that says what it stands for. */
export function summaryTurn(summary: string | undefined, messages: readonly { role: string; content?: unknown }[]): ScriptTurn {
  return { text: summary ?? `Summary of turns 1 to ${turnIndex(messages)}: the scripted model worked through its script up to here.` };
}

/** The answer given once a script has no turn left: a plain final answer, so the run ends cleanly. */
export function ranOutTurn(source: string, turnCount: number): ScriptTurn {
  return {
    text: `The script ${source} has run out: it has ${turnCount} ${turnCount === 1 ? 'turn' : 'turns'} and was asked for another, so this run stops here.`,
  };
}

/**
 * The response for `turn` at position `index`. `inputChars` is the length of the request as JSON,
 * which sizes the estimated input usage (about four characters a token).
 */
export function turnResponse(turn: ScriptTurn, index: number, model: string, inputChars: number): ModelResponse {
  const content: AssistantBlock[] = [];
  if (turn.thinking !== undefined) content.push({ type: 'thinking', thinking: turn.thinking, signature: thinkingSignature(turn.thinking) });
  if (turn.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: turn.redactedThinking });
  if (turn.text) content.push({ type: 'text', text: turn.text });
  (turn.tools ?? []).forEach((tool, i) => {
    // A copy, so a caller that changes the input cannot change the script.
    content.push({ type: 'tool_use', id: `toolu_s${index}_${i}`, name: tool.name, input: structuredClone(tool.input ?? {}) });
  });
  const outputChars =
    (turn.text ?? '').length + (turn.thinking ?? '').length + (turn.tools?.length ? JSON.stringify(turn.tools).length : 0);
  return {
    model,
    content,
    stopReason: turn.stopReason ?? (turn.tools?.length ? 'tool_use' : 'end_turn'),
    usage: {
      inputTokens: turn.usage?.inputTokens ?? Math.max(1, Math.ceil(inputChars / 4)),
      outputTokens: turn.usage?.outputTokens ?? Math.max(1, Math.ceil(outputChars / 4)),
      cacheCreationInputTokens: turn.usage?.cacheCreationInputTokens ?? 0,
      cacheReadInputTokens: turn.usage?.cacheReadInputTokens ?? 0,
    },
  };
}

/**
 * The signature a scripted thinking block carries: a digest of its text, so a block sent back
 * changed (or without its signature) is caught, as the API catches it.
 */
export function thinkingSignature(thinking: string): string {
  return `sig_${createHash('sha256').update(thinking).digest('base64url').slice(0, 32)}`;
}

/** `text` cut into at most `count` pieces at spaces, for streaming it the way a live model does. */
export function textChunks(text: string, count = 4): string[] {
  if (!text) return [];
  const words = text.split(/(?<= )/);
  const size = Math.ceil(words.length / count);
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += size) chunks.push(words.slice(i, i + size).join(''));
  return chunks;
}
