// The identity of a model step: which model, which turn, and a digest of the exact request. The
// request is rebuilt from recorded results on replay, so the digest matches unless something that
// shapes the conversation (the task, the tools, the prompt, the model) changed: then it diverges.
import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from '../valve/key.js';
import type { Message, ModelRequest } from '../model/types.js';

/** A model step's input in the journal: the model, the turn, how many messages, and the request's digest. */
export interface ModelStepInput {
  model: string;
  turn: number;
  messages: number;
  request: string;
}

/** The step input for one request: sha-256 of its canonical JSON (first 24 hex digits). */
export function modelStepInput(request: ModelRequest, turn: number): ModelStepInput {
  const digest = createHash('sha256').update(canonicalJson(request)).digest('hex').slice(0, 24);
  return { model: request.model, turn, messages: request.messages.length, request: digest };
}

/**
 * The same digest, kept up to date as the conversation grows, so that each turn hashes only its new
 * messages rather than the whole conversation again (replay of a long run stays flat per step).
 * It relies on the canonical key order: maxTokens, messages, model, system, thinking, tools.
 */
export class ConversationDigest {
  private readonly hash: Hash;
  private readonly suffix: string;
  private count = 0;

  constructor(fixed: Omit<ModelRequest, 'messages'>) {
    this.hash = createHash('sha256').update(`{"maxTokens":${canonicalJson(fixed.maxTokens)},"messages":[`);
    const thinking = fixed.thinking ? `,"thinking":${canonicalJson(fixed.thinking)}` : '';
    this.suffix = `],"model":${canonicalJson(fixed.model)},"system":${canonicalJson(fixed.system)}${thinking},"tools":${canonicalJson(fixed.tools)}}`;
  }

  push(message: Message): void {
    this.hash.update(`${this.count++ === 0 ? '' : ','}${canonicalJson(message)}`);
  }

  /** Equal to modelStepInput({ ...fixed, messages: every message pushed so far }, turn). */
  stepInput(model: string, turn: number): ModelStepInput {
    const digest = this.hash.copy().update(this.suffix).digest('hex').slice(0, 24);
    return { model, turn, messages: this.count, request: digest };
  }
}
