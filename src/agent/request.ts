// The identity of a model step: which model, which turn, and a digest of the exact request. The
// request is rebuilt from recorded results on replay, so the digest matches unless something that
// shapes the conversation (the task, the tools, the prompt, the model) changed: then it diverges.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../durable/key.js';
import type { ModelRequest } from '../model/types.js';

export interface ModelStepInput {
  model: string;
  turn: number;
  messages: number;
  request: string;
}

export function modelStepInput(request: ModelRequest, turn: number): ModelStepInput {
  const digest = createHash('sha256').update(canonicalJson(request)).digest('hex').slice(0, 24);
  return { model: request.model, turn, messages: request.messages.length, request: digest };
}
