// task: a subagent. The call hands a prompt to a run of its own (same repository, same journal, the
// tools but this one), which works until its final answer; that answer is the call's result. The
// run itself is the session's to drive (session/subagents.ts): this file is the tool the model sees.
//
// The call is safe to repeat: the subagent keeps its own journal, so running the call again (after
// a crash of the parent) goes on with the same subagent from its first unfinished step, and a
// finished one answers from its journal. No intent is recorded; a crash never leaves it "in flight".
import { defineTool } from './define-tool.js';
import { asText } from './truncate.js';
import type { Tool, ToolContext, ToolResult } from './types.js';
import { validateInput } from './validate-input.js';
import { shortValue } from '../format/text.js';

/** The input of a task call. */
export interface TaskInput {
  /** A few words for people: the subagent's label in approvals, step lines, `runs` and `log`. */
  description: string;
  /** The whole task for the subagent: it sees nothing of this conversation but this. */
  prompt: string;
}

/** How many subagents of one answer run at the same time. */
export const MAX_SUBAGENTS_AT_ONCE = 4;

/** What the session is asked to do for one task call: drive (or resume) the subagent of `step`, and hand back its answer. */
export interface SubagentRequest extends TaskInput {
  /** The parent's step of this call: the subagent's run id is derived from it. */
  step: number;
  signal?: AbortSignal;
}

/**
 * Drives the subagent to its final answer. Throws when the subagent cannot go on (stopped by the
 * person, a model that fails, a divergence): the parent's step is then not recorded, and the
 * identical command later resumes the subagent where it stopped.
 */
export type SubagentRunner = (request: SubagentRequest) => Promise<ToolResult>;

const description = `Starts a subagent: another agent with the same tools as you (but this one), working in the same repository, which carries out the prompt on its own and answers with a final report.
- Use it for a self-contained piece of work (a search across many files, a change in one area, a question to research) whose details need not fill this conversation.
- The subagent sees nothing of this conversation: the prompt must say everything it needs (what to do, where, what to report back).
- Several task calls in one answer run at the same time (at most ${MAX_SUBAGENTS_AT_ONCE}); give them work that does not touch the same files.
- The result is the subagent's final answer; check its work before relying on it.`;

/**
 * The task tool as the model is shown it, with no subagents behind it yet: what a new run pins
 * (its configuration lists it) before the subagents, which inherit that configuration, are made.
 */
export const TASK_TOOL_SHOWN: Pick<Tool<TaskInput>, 'name' | 'description' | 'inputSchema'> = {
  name: 'task',
  description,
  inputSchema: {
    type: 'object',
    properties: {
      description: { type: 'string', description: 'A short (3-5 word) description of the task, shown to the person.' },
      prompt: { type: 'string', description: 'The task for the subagent, complete: it sees nothing else of this conversation.' },
    },
    required: ['description', 'prompt'],
    additionalProperties: false,
  },
};

/** The task tool: each call a subagent driven by `run`. */
export function createTaskTool(run: SubagentRunner): Tool<TaskInput> {
  const tool = defineTool<TaskInput>({
    ...TASK_TOOL_SHOWN,
    describe: (input) => `task "${shortValue(asText(input.description), 40)}"`,
    // Its subagent's own steps ask (labelled); the call itself changes nothing but through them.
    needsApproval: () => false,
    // What its subagent changed is in the tree after it: the parent's checkpoint takes it in.
    mayChangeFiles: () => true,
    run: async () => {
      throw new Error('unreachable: execute drives the subagent');
    },
  });
  return {
    ...tool,
    maxConcurrent: MAX_SUBAGENTS_AT_ONCE,
    // Not defineTool's execute: a subagent stopped or failed throws, so the parent's step stays
    // unrecorded and goes on with the same subagent next time, instead of recording an error.
    async execute(input: TaskInput, context: ToolContext = {}): Promise<ToolResult> {
      const problem = validateInput(tool.inputSchema, input);
      if (problem) return tool.execute(input, context);
      if (context.step === undefined)
        return { output: 'A subagent needs a run journal to work in; this call was not run.', isError: true, summary: 'error: no journal' };
      return run({ description: input.description, prompt: input.prompt, step: context.step, signal: context.signal });
    },
  };
}
