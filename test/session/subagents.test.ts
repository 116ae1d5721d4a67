// Subagents' approvals, in process: two subagents of one answer each ask to write a file; the
// questions reach the parent's approver one at a time, each labelled with the subagent that asks,
// and a declined call is the subagent's own step (its model is told, the parent's run goes on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startRun } from '../../src/session/index.js';
import { subagentRunId, runIdForTask } from '../../src/journal/run-id.js';
import type { ApprovalAsker } from '../../src/agent/tool-call.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../src/model/types.js';
import { useScratch } from '../helpers/scratch.js';
import { createTools } from '../../src/tools/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunRecord } from '../../src/journal/reader.js';

const scratch = useScratch();
const usage = { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

// Parent: two task calls, then an answer. Each subagent: a write of its own file, then an answer.
function respond(request: ModelRequest): ModelResponse {
  const first = request.messages[0]?.content;
  const text = typeof first === 'string' ? first : JSON.stringify(first);
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  const reply = (content: ModelResponse['content']): ModelResponse => ({ model: 'fake', content, stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', usage });
  const who = /WRITE (\w+)/.exec(text)?.[1];
  if (!who) {
    return turn === 0
      ? reply([{ type: 'tool_use', id: 't1', name: 'task', input: { description: 'write one', prompt: 'WRITE one.txt' } }, { type: 'tool_use', id: 't2', name: 'task', input: { description: 'write two', prompt: 'WRITE two.txt' } }])
      : reply([{ type: 'text', text: 'Both asked.' }]);
  }
  return turn === 0 ? reply([{ type: 'tool_use', id: `w-${who}`, name: 'write_file', input: { path: `${who}.txt`, content: `${who}\n` } }]) : reply([{ type: 'text', text: `${who} done` }]);
}

test("subagents' questions reach the parent's approver one at a time, labelled; a no is the subagent's step", async () => {
  const repo = await scratch.repo();
  const provider: ModelProvider = { name: 'fake', complete: async (request) => respond(request) };
  const asked: Array<{ tool: string; asker?: ApprovalAsker }> = [];
  let open = 0;
  let most = 0;
  let modelTurns = 0;
  const task = 'two subagents that each write a file';
  const outcome = await startRun({
    dir: repo.root,
    task,
    model: 'fake',
    provider,
    sandbox: { use: false },
    onEvent: (event) => {
      if (event.type === 'subagent' && event.event.type === 'recorded' && event.event.kind === 'model') modelTurns++;
    },
    approve: async (tool, _input, asker) => {
      asked.push({ tool: tool.name, asker });
      most = Math.max(most, ++open);
      // Held open until both subagents have their first answer (each then goes straight to its
      // question), and a little longer: another subagent's question would be asked meanwhile.
      while (modelTurns < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
      open--;
      return asker?.subagent.description === 'write one' ? true : { reason: 'not that one' };
    },
  });
  assert.equal(outcome.status, 'finished');
  assert.equal(outcome.final, 'Both asked.');
  assert.equal(most, 1, 'one question at a time');
  const parent = runIdForTask(task);
  assert.deepEqual(
    asked.map((q) => [q.tool, q.asker?.subagent.description, q.asker?.subagent.run]).sort(),
    [
      ['write_file', 'write one', subagentRunId(parent, 2)],
      ['write_file', 'write two', subagentRunId(parent, 3)],
    ],
  );
  assert.ok(existsSync(join(repo.root, 'one.txt')), 'the approved write ran');
  assert.ok(!existsSync(join(repo.root, 'two.txt')), 'the declined one did not');
  // The task tool is made after the run is pinned (with the subagents it drives), yet the run pins
  // it where the built-in tools have it, last, as the model was always shown it; a subagent pins the rest.
  const shown = (tools: Array<{ name: string; description: string; inputSchema: unknown }>) =>
    tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }));
  const built = shown(createTools(repo.root, { subagents: async () => assert.fail('no subagent') }));
  const store = await JournalStore.open(repo.root);
  assert.deepEqual((await readRunRecord(store, parent))?.config?.tools, built);
  assert.deepEqual((await readRunRecord(store, subagentRunId(parent, 2)))?.config?.tools, built.filter((tool) => tool.name !== 'task'));
});
