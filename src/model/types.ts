// The conversation shapes savepoint sends to a model and records in the journal. They mirror the
// Anthropic Messages API (so a request can be passed to the SDK as it is) but only the parts used.
// No behaviour of its own: types only.

/** Text in a message. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** A tool call in the model's answer. */
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** An image, as the Messages API takes it: its bytes in base64 with their media type. */
export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
}

/**
 * The result of a tool call, sent back to the model in a user turn: its text, or (an image read,
 * an MCP tool's images) its text then its images.
 */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

/**
 * Extended thinking: the model's reasoning before it answers, with the signature the API checks
 * when the block is sent back. Journaled and sent back exactly, never edited.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the API encrypted (flagged by its safety systems): sent back as it came. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** One block of the model's answer: text, a tool call, or (extended thinking) a thinking block. */
export type AssistantBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock;
/** One block of a user turn: text or a tool result. */
export type UserBlock = TextBlock | ToolResultBlock;

/** One turn of the conversation, in the shape of the Anthropic Messages API. */
export type Message = { role: 'user'; content: string | UserBlock[] } | { role: 'assistant'; content: AssistantBlock[] };

/** A tool as the model is shown it: name, description and input schema. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** Everything one model call sends: the model, the system prompt, the conversation, the tools and the limits. */
export interface ModelRequest {
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Extended thinking, when it is on: the tokens the model may think for before it answers. */
  thinking?: { budgetTokens: number };
}

/** The tokens a model call used, as the API reports them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** What one model call answered: its content, why it stopped, and its usage. */
export interface ModelResponse {
  /** The model id that answered (as the server reports it). */
  model: string;
  content: AssistantBlock[];
  /** 'end_turn', 'tool_use', 'max_tokens', 'stop_sequence', ... */
  stopReason: string;
  usage: Usage;
  /**
   * The API's words when it refused the request as too long for the context window: savepoint
   * records that refusal as the step's result (stopReason 'prompt_too_long', no content), so
   * that replay compacts at the same place without asking again.
   */
  refused?: string;
  /**
   * The tool calls of the answer that must not run, by id, each with what was wrong in words for
   * the model (no name, an id used twice, input that was not JSON): the agent answers each with an
   * error instead of running it. Absent when every call is well formed.
   */
  invalidCalls?: Record<string, string>;
}

/** Options of one model call: streaming callbacks and an abort signal. */
export interface CompleteOptions {
  /** Called with each piece of text as it streams in, so a live call is never a silent pause. */
  onText?: (text: string) => void;
  /** Called with each piece of extended thinking as it streams in. */
  onThinking?: (text: string) => void;
  signal?: AbortSignal;
}

/** Anything that answers a request: the Anthropic API, or a script for demos and tests. */
export interface ModelProvider {
  /** For step lines and run.json: `claude-sonnet-5-5`, `script:fixtures/demo.json`. */
  readonly name: string;
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse>;
}
