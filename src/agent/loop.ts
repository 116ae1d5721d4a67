// The agent loop: ask the model, run each tool call it makes, hand back the results, repeat until
// it answers without a tool call. Every model call and every tool call is a durable step, and the
// loop does not know (or care) whether a step ran live or was handed back from the journal: it
// rebuilds each request from the results `step` returns, so replay reproduces it exactly.
import type { Checkpoint, RunJournal } from '../durable/run-journal.js';
import type { AssistantBlock, Message, ModelProvider, ModelRequest, ModelResponse, ToolResultBlock, ToolUseBlock } from '../model/types.js';
import { truncateForModel } from '../tools/truncate.js';
import type { AnyTool, ToolResult } from '../tools/types.js';
import { inFlightAnswer, type InFlightPolicy } from './in-flight.js';
import { ConversationDigest } from './request.js';
import { SYSTEM_PROMPT } from './system-prompt.js';

export interface AgentOptions {
  journal: RunJournal;
  task: string;
  model: string;
  // Made on first use, so a run that only replays needs no credentials.
  provider: () => ModelProvider | Promise<ModelProvider>;
  tools: AnyTool[];
  maxSteps?: number;
  maxTokens?: number;
  inFlight?: InFlightPolicy;
  // Asked before a live tool call that needs approval; false records a refusal for the model.
  approve?: (tool: AnyTool, input: Record<string, unknown>) => Promise<boolean>;
  // Live model text as it streams.
  onText?: (text: string) => void;
  signal?: AbortSignal;
  // Called after each step that may have changed files: the working-tree checkpoint to record.
  checkpoint?: () => Checkpoint | undefined | Promise<Checkpoint | undefined>;
  // The input a live tool call runs with, from the one the model wrote (recorded, redacted): turns
  // placeholders back into secret values. Pure to the loop; it may throw to stop before anything runs.
  revealSecrets?: <V>(input: V) => V;
}

export interface AgentOutcome {
  // 'done': the model answered without tools; 'max-steps': stopped at the step limit.
  status: 'done' | 'max-steps';
  final: string;
  steps: number;
}

// Runs the task to its end (or the step limit), through the journal.
export async function runAgent(options: AgentOptions): Promise<AgentOutcome> {
  const { journal, tools, maxSteps = 200, maxTokens = 8192, inFlight = 'report' } = options;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const toolSpecs = tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: { ...tool.inputSchema } }));
  const messages: Message[] = [];
  const digest = new ConversationDigest({ model: options.model, system: SYSTEM_PROMPT, tools: toolSpecs, maxTokens });
  const add = (message: Message) => {
    messages.push(message);
    digest.push(message);
  };
  add({ role: 'user', content: options.task });
  let steps = 0;

  for (let turn = 1; ; turn++) {
    if (steps >= maxSteps) return { status: 'max-steps', final: '', steps };
    const request: ModelRequest = { model: options.model, system: SYSTEM_PROMPT, messages: [...messages], tools: toolSpecs, maxTokens };
    const response = await journal.step<ModelResponse>(
      'model',
      digest.stepInput(options.model, turn),
      async () => (await options.provider()).complete(request, { onText: options.onText, signal: options.signal }),
      { describe: `model turn ${turn}`, summarize: summarizeResponse, usage: (r) => r.usage },
    );
    steps++;
    add({ role: 'assistant', content: response.content });
    const calls = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
    if (calls.length === 0) return { status: 'done', final: textOf(response.content), steps };

    const results: ToolResultBlock[] = [];
    for (const call of calls) {
      if (steps >= maxSteps) return { status: 'max-steps', final: '', steps };
      const result = await callTool(byName.get(call.name), call, options, inFlight);
      steps++;
      results.push({ type: 'tool_result', tool_use_id: call.id, content: truncateForModel(result.output), ...(result.isError ? { is_error: true } : {}) });
    }
    // Every tool_use gets its tool_result before the next request, also after a crash mid-answer.
    add({ role: 'user', content: results });
  }
}

async function callTool(tool: AnyTool | undefined, call: ToolUseBlock, options: AgentOptions, inFlight: InFlightPolicy): Promise<ToolResult> {
  const { journal, signal } = options;
  if (!tool) {
    const known = [...options.tools.map((t) => t.name)].join(', ');
    const result: ToolResult = { isError: true, output: `There is no tool named "${call.name}". The tools are: ${known}.`, summary: 'unknown tool' };
    return journal.step('unknown_tool', { name: call.name, input: call.input }, () => result, { describe: `unknown tool "${call.name.slice(0, 40)}"`, summarize: (r) => r.summary });
  }
  const input = call.input ?? {};
  // The step's identity and record keep what the model wrote; only the effect sees the secrets.
  let liveInput = input;
  return journal.step<ToolResult>(
    tool.name,
    input,
    async () => {
      const result = await tool.execute(liveInput, { signal });
      // Interrupted (Ctrl-C): record nothing, so the step stays in flight for the next run to handle.
      signal?.throwIfAborted();
      return result;
    },
    {
      intent: !tool.isRepeatSafe(input),
      describe: tool.describe(input),
      summarize: (r) => r.summary,
      onInFlight: (step) => inFlightAnswer(inFlight, step),
      gate: async () => {
        // Only a live step gets here, before its intent is recorded: an unknown secret stops it with nothing written.
        if (options.revealSecrets) liveInput = options.revealSecrets(input);
        if (!options.approve || !tool.needsApproval(input) || (await options.approve(tool, input))) return undefined;
        return { result: { isError: true, output: 'The user declined this tool call. Ask or try another way.', summary: 'declined by the user' } };
      },
      checkpoint: options.checkpoint && tool.mayChangeFiles(input) ? () => options.checkpoint!() : undefined,
    },
  );
}

function textOf(content: AssistantBlock[]): string {
  return content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n')
    .trim();
}

// `-> read_file, run_bash` or `-> "All tests pass now."` for the step line and commit subject.
export function summarizeResponse(response: ModelResponse): string {
  const calls = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use').map((b) => b.name);
  if (calls.length) return `calls ${calls.join(', ')}`;
  const text = textOf(response.content).replace(/\s+/g, ' ');
  return `answers "${text.length > 50 ? `${text.slice(0, 49)}…` : text}"`;
}
