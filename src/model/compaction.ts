// The words of compaction that both sides know: the instruction that asks a model to summarize
// the conversation so far, and the header of the summary a compacted conversation starts with.
// The agent writes them; the scripted model and the test server recognize them, so a script keeps
// answering the right turn after a compaction (its turn is the summarized turns plus the
// assistant messages still in the conversation) and answers a compaction request with a summary.
import type { Message, UserBlock } from './types.js';

/** The user text that asks for a summary: the last block of a compaction request. */
export const COMPACT_INSTRUCTION =
  'savepoint: the conversation is nearing the context window and will be compacted. Write a summary of the work so far ' +
  'that lets you carry on without the earlier messages: the task and any follow-up instructions, what you found, every ' +
  'file you changed and how, the commands you ran and their outcomes, what is left to do and your next step. Keep exact ' +
  'names, paths, errors and numbers. Answer with the summary only, in plain text, and call no tool.';

const HEADER = /^\[Summary of the earlier conversation: (\d+) model turns? compacted by savepoint/;

/** The first text of a compacted conversation's summary block, saying how many turns it stands for. */
export function summaryHeader(turns: number): string {
  return `[Summary of the earlier conversation: ${turns} model turn${turns === 1 ? '' : 's'} compacted by savepoint; every original message is kept in its journal.]`;
}

/** True when `messages` end with the compaction instruction (a request for a summary). */
export function isCompactionRequest(messages: readonly { role: string; content: unknown }[]): boolean {
  const last = messages.at(-1);
  if (!last || last.role !== 'user' || !Array.isArray(last.content)) return false;
  const block = (last.content as Array<{ type?: string; text?: string }>).at(-1);
  return block?.type === 'text' && block.text === COMPACT_INSTRUCTION;
}

/** How many model turns earlier compactions summarized (0 for a conversation never compacted). */
export function summarizedTurns(messages: readonly { role: string; content: unknown }[]): number {
  const first = messages[0];
  if (!first || !Array.isArray(first.content)) return 0;
  for (const block of first.content as Array<{ type?: string; text?: string }>) {
    const match = block.type === 'text' && block.text ? HEADER.exec(block.text) : null;
    if (match) return Number(match[1]);
  }
  return 0;
}

/** The first message of a compacted conversation: the task, then the summary under its header. */
export function summaryMessage(task: string, summary: string, turns: number): Message {
  const content: UserBlock[] = [
    { type: 'text', text: task },
    { type: 'text', text: `${summaryHeader(turns)}\n\n${summary.trim()}` },
  ];
  return { role: 'user', content };
}
