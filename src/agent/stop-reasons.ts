// What the loop does with an answer the model did not finish: one cut off at max_tokens. A tool
// call in it never runs, even when its partial input parses ("timeout_ms": 60000 cut to 6 is a
// valid 6): the model is told, in a tool_result for each call, that its answer was cut off and the
// call was not run. A text answer cut off is continued, not taken as the final answer. Both are
// built from the recorded response alone, so replay rebuilds the same conversation. Pure code.
import type { ToolResultBlock, ToolUseBlock } from '../model/types.js';

/** The stop reason of an answer cut off at the max_tokens limit. */
export const MAX_TOKENS = 'max_tokens';

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
