// What the loop does with an answer the model did not finish or should not act on. One cut off at
// max_tokens: a tool call in it never runs, even when its partial input parses ("timeout_ms": 60000
// cut to 6 is a valid 6), and the model is told, in a tool_result for each call, that its answer
// was cut off and the call was not run; a text answer cut off is continued, not taken as the final
// answer. One that stopped as a refusal: its calls never run either, and the model is told why. One
// paused by the API (pause_turn): sent back as it is so the model goes on. A call the answer got
// wrong (no name, an id used twice, input that is not JSON; see ModelResponse.invalidCalls) gets an
// error result instead of running. All of it is built from the recorded response alone, so replay
// rebuilds the same conversation. Pure code.
import type { ModelResponse, ToolResultBlock, ToolUseBlock } from '../model/types.js';

/** The stop reason of an answer cut off at the max_tokens limit. */
export const MAX_TOKENS = 'max_tokens';

/** The stop reason of an answer the model (or the API's safety systems) refused to give. */
export const REFUSAL = 'refusal';

/** The stop reason of an answer the API paused in a long turn: sent back as it is, the model goes on. */
export const PAUSE_TURN = 'pause_turn';

/** How many times in a row a cut-off text answer is continued before it is taken as it is. */
export const MAX_CONTINUATIONS = 8;

/** The tool_results for the calls of a cut-off answer: each one an error saying it was not run. */
export function cutOffResults(calls: readonly ToolUseBlock[], maxTokens: number): ToolResultBlock[] {
  return calls.map((call) => ({
    type: 'tool_result',
    tool_use_id: call.id,
    is_error: true,
    content:
      `Your answer was cut off at the max_tokens limit (${maxTokens} tokens) before this ${call.name} call was complete, ` +
      `so it was not run: its input may be incomplete. Send the call again, complete; if it is long (a large file), ` +
      `split it into smaller calls (write part of the file, then edit_file to add the rest).`,
  }));
}

/** The user turn that asks the model to go on with a text answer that was cut off. */
export function continueText(maxTokens: number): string {
  return `Your answer was cut off at the max_tokens limit (${maxTokens} tokens). Continue exactly where it stopped, without repeating what you already wrote.`;
}

/** The tool_results for the calls of a refused answer: each one an error saying it was not run. */
export function refusalResults(calls: readonly ToolUseBlock[]): ToolResultBlock[] {
  return calls.map((call) => ({
    type: 'tool_result',
    tool_use_id: call.id,
    is_error: true,
    content: `Your answer stopped as a refusal (stop reason "refusal"), so this ${call.name} call was not run. If the task can go on another way, say how; otherwise explain why you stopped.`,
  }));
}

/** The results for the calls of an answer none of whose calls may run (cut off, or refused), or undefined when they may. */
export function notRunResults(response: ModelResponse, calls: readonly ToolUseBlock[], maxTokens: number): ToolResultBlock[] | undefined {
  if (calls.length === 0) return undefined;
  if (response.stopReason === MAX_TOKENS) return cutOffResults(calls, maxTokens);
  if (response.stopReason === REFUSAL) return refusalResults(calls);
  return undefined;
}

/** The error result for a call the answer got wrong (see ModelResponse.invalidCalls), or undefined for a call that may run. */
export function invalidCallResult(call: ToolUseBlock, response: ModelResponse): ToolResultBlock | undefined {
  const invalid = response.invalidCalls;
  const why = invalid && Object.hasOwn(invalid, call.id) ? invalid[call.id] : undefined;
  if (typeof why !== 'string') return undefined;
  return { type: 'tool_result', tool_use_id: call.id, is_error: true, content: why };
}

/** The final answer of a refused answer: its text, or words that say it was a refusal. */
export function refusalText(text: string): string {
  return text ? `${text}\n\n(The model refused: stop reason "refusal".)` : '(The model refused to answer: stop reason "refusal".)';
}
