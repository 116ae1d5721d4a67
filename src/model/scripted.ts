// The scripted model: answers from a JSON file instead of the API, for `savepoint demo`, tests and
// anyone without a key. Select it with `--model script:<file>` (the path is relative to the
// current directory).
//
// Format (also in docs/scripted-models.md):
//
//   { "model": "scripted-demo",
//     "description": "optional, for people",
//     "turns": [
//       { "delayMs": 400, "text": "I'll look at the failing test first.",
//         "tools": [ { "name": "read_file", "input": { "path": "test.js" } } ] },
//       { "text": "Done: the bug was an off-by-one.",
//         "usage": { "inputTokens": 1200, "outputTokens": 80 } } ] }
//
// - `model` (optional, default "scripted"): the model id each response reports.
// - `turns` (required, at least one): the answers, in order. Each has `text`, `tools` or both:
//   - `text`: what the model says. It streams out in a few pieces, across `delayMs` if given.
//   - `tools`: tool calls, each `{ "name", "input" }` (`input` defaults to {}). Their ids are
//     `toolu_s<turn>_<i>`, both counted from 0, so they are the same in every process.
//   - `delayMs` (default 0): how long the answer takes; the wait is real and can be aborted.
//   - `usage`: any of inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens.
//     Missing ones are estimated: input = request JSON length / 4, output = answer length / 4,
//     cache = 0.
//   - `stopReason` (default "tool_use" when there are tools, else "end_turn").
//   - `thinking`, `redactedThinking`: extended thinking blocks before the answer (a thinking block
//     signed with a digest of its text; a redacted_thinking block with this data).
// - Unknown keys are errors, so a typo cannot silently change a demo.
//
// - `summary` (optional): the answer to a compaction request (one whose last user block is the
//   summarization instruction); it uses no turn. Default: a summary naming the turns it stands for.
//
// Which turn answers: the number of assistant messages already in the request, plus the turns a
// compaction summarized (its summary's header says how many). The provider keeps
// no state, so a run resumed by a new process at turn k gets turn k, exactly like a replay expects.
// Asked past the last turn, it answers with an end_turn text saying the script ran out.
import { sleep, abortReason } from './abort.js';
import { validateScript, type Script } from './script-file.js';
import { ranOutTurn, summaryTurn, textChunks, turnIndex, turnResponse } from './script-turn.js';
import { isCompactionRequest } from './compaction.js';
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from './types.js';

/** Loading and checking scripts lives in script-file.ts; re-exported so one import is enough. */
export { loadScript, validateScript, type Script, type ScriptTurn, type ScriptTool } from './script-file.js';

/** Options of createScriptedProvider. */
export interface ScriptedProviderOptions {
  /** The provider's name for step lines and run.json; default `script:<file>`. */
  name?: string;
}

/** A model that answers `script` turn by turn (a script from loadScript, or one written in code). */
export function createScriptedProvider(script: Script, options: ScriptedProviderOptions = {}): ModelProvider {
  const { file, ...content } = script;
  // Checked again even when loaded, so a script written in code gets the same clear errors.
  const checked = validateScript(content, file ?? options.name ?? 'written in code');
  const name = options.name ?? `script:${file ?? 'inline'}`;
  const model = checked.model ?? 'scripted';
  return {
    name,
    complete: (request, completeOptions) => answer(checked, name, model, request, completeOptions),
  };
}

async function answer(
  script: Script,
  name: string,
  model: string,
  request: ModelRequest,
  options: CompleteOptions = {},
): Promise<ModelResponse> {
  const { onText, onThinking, signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  const index = turnIndex(request.messages);
  const compacting = isCompactionRequest(request.messages);
  const turn = compacting ? summaryTurn(script.summary, request.messages) : (script.turns[index] ?? ranOutTurn(name, script.turns.length));
  const inputChars = JSON.stringify({ system: request.system, messages: request.messages, tools: request.tools }).length;
  const response = turnResponse(turn, index, model, inputChars);
  // Like a live model: the text arrives in pieces spread over the turn's delay, never all at the end.
  const chunks = textChunks(turn.text ?? '');
  const delay = turn.delayMs ?? 0;
  if (turn.thinking) onThinking?.(turn.thinking);
  if (chunks.length === 0) await sleep(delay, signal);
  for (const chunk of chunks) {
    await sleep(delay / chunks.length, signal);
    onText?.(chunk);
  }
  return response;
}
