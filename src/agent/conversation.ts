// The conversation the loop sends, with its running digest (the model step's identity) and how
// full the context window is, as the last response reported it. A compaction replaces the
// messages and starts the digest over; the journal's entries are never touched.
import type { RunConfig } from '../journal/entry.js';
import type { Message, ModelRequest, Usage } from '../model/types.js';
import { contextTokens } from './compaction.js';
import { ConversationDigest, type ModelStepInput } from './request.js';

/** The messages of a run's conversation as the model is sent them. */
export class Conversation {
  private list: Message[] = [];
  private digest: ConversationDigest;
  private config: RunConfig;
  /** The tokens the conversation held at the last response (or compaction estimate). */
  tokens = 0;
  /** Compactions since the last model response (more than one: the API still found the prompt too long). */
  compactionsInARow = 0;
  // Set after a compaction (or a try with nothing to compact), until the next response.
  private settled = false;

  constructor(config: RunConfig) {
    this.config = config;
    this.digest = this.newDigest();
  }

  /**
   * Goes on from a conversation as a snapshot kept it (valve/snapshot.ts): its messages, how full
   * the window was, and the compaction state. The digest is rebuilt from the messages, as it
   * always stands for exactly them.
   */
  restore(state: { messages: readonly Message[]; tokens: number; compactionsInARow: number; settled: boolean }): void {
    this.list = [...state.messages];
    this.digest = this.newDigest();
    for (const message of this.list) this.digest.push(message);
    this.tokens = state.tokens;
    this.compactionsInARow = state.compactionsInARow;
    this.settled = state.settled;
  }

  /** Whether a compaction was tried since the last response (see restore). */
  get isSettled(): boolean {
    return this.settled;
  }

  get messages(): readonly Message[] {
    return this.list;
  }

  add(message: Message): void {
    this.list.push(message);
    this.digest.push(message);
  }

  /** The conversation after a compaction: these messages, with `tokens` estimated for them. */
  replace(messages: Message[], tokens: number): void {
    this.list = [...messages];
    this.digest = this.newDigest();
    for (const message of this.list) this.digest.push(message);
    this.tokens = tokens;
    this.compactionsInARow++;
    this.settled = true;
  }

  /** The run changed its model (a config step): requests and their identity name it from now on. */
  useModel(model: string): void {
    this.config = { ...this.config, model };
    this.digest = this.newDigest();
    for (const message of this.list) this.digest.push(message);
  }

  /** Nothing could be summarized: do not try again before the next response. */
  hold(): void {
    this.settled = true;
  }

  /** A response arrived: its usage says how full the context window is now. */
  observe(usage: Usage): void {
    this.tokens = contextTokens(usage);
    this.compactionsInARow = 0;
    this.settled = false;
  }

  /** True when the conversation has reached the compaction threshold of the context window. */
  get nearsWindow(): boolean {
    const { enabled, at, contextWindow } = this.config.compaction;
    return enabled && !this.settled && this.tokens >= at * contextWindow;
  }

  request(): ModelRequest {
    const { model, system, tools, maxTokens, thinking } = this.config;
    return { model, system, messages: [...this.list], tools, maxTokens, ...(thinking ? { thinking } : {}) };
  }

  stepInput(turn: number): ModelStepInput {
    return this.digest.stepInput(this.config.model, turn);
  }

  private newDigest(): ConversationDigest {
    const { model, system, tools, maxTokens, thinking } = this.config;
    return new ConversationDigest({ model, system, tools, maxTokens, ...(thinking ? { thinking } : {}) });
  }
}
