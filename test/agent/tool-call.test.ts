// One tool call through the journal, as far as the call decides: an unknown tool is told the tools
// there are; a deny rule wins over everything; an allow rule skips the question; a declined call
// records the person's reason; a stop before the call answers it as stopped; a call that runs tracks
// its command groups while it runs. The journal is stood in for by a step() that asks `decline`
// first and runs the call when nothing was decided, as the valve does for a live step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, declinedResult, deniedResult, DECLINED_RESULT, hookBlockedResult, STOPPED_RESULT, withHookFeedback, type ToolCallContext } from '../../src/agent/tool-call.js';
import { defineTool, toolOk } from '../../src/tools/define-tool.js';
import type { AnyTool, ToolInputSchema } from '../../src/tools/types.js';
import type { RunJournal } from '../../src/valve/run-journal.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { openRunJournal } from '../../src/valve/open-journal.js';

const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false } as ToolInputSchema;

function setUp(context: Partial<ToolCallContext> = {}) {
  const ran: string[] = [];
  const tracked: Array<[string, number]> = [];
  const bash = defineTool<{ command: string }>({
    name: 'run_bash',
    description: 'runs a command',
    inputSchema: schema,
    describe: (input) => `run_bash "${input.command}"`,
    needsApproval: () => true,
    isRepeatSafe: () => false,
    run: async (input, { onSpawn }) => (onSpawn?.(4242), ran.push(input.command), toolOk(`ran ${input.command}`, 'exit 0')),
  }) as AnyTool;
  const steps: Array<{ kind: string; description: string }> = [];
  const journal = {
    step: async (kind: string, _input: unknown, run: (position: number) => unknown, options: { describe: string; decline?: () => Promise<{ result: unknown } | undefined> }) => {
      steps.push({ kind, description: options.describe });
      const decided = await options.decline?.();
      return decided ? decided.result : run(1);
    },
    commands: {
      track: (pid: number, description: string) => void tracked.push([description, pid]),
      untrack: (pid: number) => void tracked.push(['untracked', pid]),
    },
  } as unknown as RunJournal;
  const ctx: ToolCallContext = { journal, tools: new Map([['run_bash', bash]]), inFlight: 'report', ...context };
  const call = (name: string, input: Record<string, unknown> = { command: 'make' }) => callTool({ type: 'tool_use', id: 'c1', name, input }, ctx);
  return { call, ran, steps, tracked };
}

test('an unknown tool is a recorded error naming the tools there are', async () => {
  const { call, steps } = setUp();
  assert.deepEqual(await call('run_bsh'), { isError: true, output: 'There is no tool named "run_bsh". The tools are: run_bash.', summary: 'unknown tool' });
  assert.deepEqual(steps, [{ kind: 'unknown_tool', description: 'unknown tool "run_bsh"' }]);
});

test('approved, the call runs and its command group is tracked while it runs', async () => {
  const { call, ran, tracked } = setUp({ approve: async () => true });
  assert.deepEqual(await call('run_bash'), { output: 'ran make', isError: false, summary: 'exit 0' });
  assert.deepEqual(ran, ['make']);
  assert.deepEqual(tracked, [['run_bash "make"', 4242], ['untracked', 4242]]);
});

test('a deny rule wins over an approval; an allow rule skips the question', async () => {
  const denied = setUp({ approve: async () => true, permission: () => ({ verdict: 'deny', rule: 'Bash(make)' }) });
  assert.deepEqual(await denied.call('run_bash'), deniedResult('Bash(make)'));
  assert.deepEqual(denied.ran, []);
  const allowed = setUp({ approve: async () => assert.fail('not asked'), permission: () => ({ verdict: 'allow', rule: 'Bash(make)' }) });
  assert.equal((await allowed.call('run_bash')).output, 'ran make');
});

test("declined, the call is not run and the model hears the person's reason", async () => {
  const plain = setUp({ approve: async () => false });
  assert.equal(await plain.call('run_bash'), DECLINED_RESULT);
  const why = setUp({ approve: async () => ({ reason: '  use the Makefile target test  ' }) });
  assert.deepEqual(await why.call('run_bash'), declinedResult('use the Makefile target test'));
  assert.deepEqual([plain.ran, why.ran], [[], []]);
});

test('a stop before the call, or at its question, answers it as stopped', async () => {
  const stopped = new AbortController();
  stopped.abort();
  const before = setUp({ signal: stopped.signal, approve: async () => assert.fail('not asked') });
  assert.equal(await before.call('run_bash'), STOPPED_RESULT);
  const during = new AbortController();
  const atQuestion = setUp({ signal: during.signal, approve: async () => { during.abort(); throw new Error('the question was cut off'); } });
  assert.equal(await atQuestion.call('run_bash'), STOPPED_RESULT);
  assert.deepEqual([before.ran, atQuestion.ran], [[], []]);
});

test('the words of a declined, denied, hook-blocked or hook-commented call', () => {
  assert.equal(declinedResult('   '), DECLINED_RESULT);
  assert.deepEqual(declinedResult('x'.repeat(60)).summary, `declined: ${'x'.repeat(49)}…`);
  assert.match(deniedResult('Bash(rm:*)').output, /deny it \(rule "Bash\(rm:\*\)"\)\. It was not run\./);
  assert.deepEqual(hookBlockedResult('no deploys on Friday'), { isError: true, output: 'This tool call was blocked by a PreToolUse hook, which said:\nno deploys on Friday\nIt was not run. Take that into account: try another way, or ask the user.', summary: 'blocked by a PreToolUse hook: no deploys on Friday' });
  const result = toolOk('ok', 'exit 0');
  assert.equal(withHookFeedback(result, undefined), result);
  assert.deepEqual(withHookFeedback(result, 'lint: 2 warnings'), { output: 'ok\n\n[PostToolUse hook] lint: 2 warnings', isError: false, summary: 'exit 0 (a PostToolUse hook added feedback)' });
});

test('an edit hands the file it names down with its step, resolved only live: run, declined or found in flight; a replay resolves nothing', async () => {
  const store = new MemoryJournalStore();
  const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  const taken: Array<readonly string[] | undefined> = [];
  const checkpointer = { take: (paths?: readonly string[]) => (taken.push(paths), { tree, skipped: [] }) };
  let resolved = 0;
  const edit = defineTool<{ path: string }>({
    name: 'edit_file',
    description: 'edits a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false } as ToolInputSchema,
    describe: (input) => `edit_file ${input.path}`,
    needsApproval: () => true,
    isRepeatSafe: () => false,
    mayChangeFiles: () => true,
    changedPaths: ({ path }) => (resolved++, [path]),
    run: async ({ path }) => toolOk(`edited ${path}`, 'edited'),
  }) as AnyTool;
  // The process dies in the middle of b.txt's edit: its intent is recorded, its result never.
  const dying: AnyTool = { ...edit, execute: async (input) => (input.path === 'b.txt' ? assert.fail('killed mid-edit') : edit.execute(input)) };
  const approve = async (_tool: AnyTool, input: Record<string, unknown>) => input.path !== 'no.txt';
  const calls = ['a.txt', 'no.txt', 'b.txt'].map((path, i) => ({ type: 'tool_use' as const, id: `e${i}`, name: 'edit_file', input: { path } }));
  const attempt = async (tool: AnyTool) => {
    const journal = await openRunJournal(store, { run: 'edits', checkpointer });
    const context: ToolCallContext = { journal, tools: new Map([['edit_file', tool]]), inFlight: 'report', approve };
    try {
      for (const call of calls) await callTool(call, context);
    } finally {
      journal.close();
    }
  };
  await assert.rejects(attempt(dying), /killed mid-edit/);
  assert.deepEqual(taken, [['a.txt'], ['no.txt']], 'run or declined, the checkpoint is of the file the call names');
  await attempt(edit);
  assert.deepEqual(taken, [['a.txt'], ['no.txt'], ['b.txt']], 'found in flight, too');
  assert.equal(resolved, 4, 'a and no resolved once each, b at each live attempt, nothing on replay');
  assert.deepEqual((await readRunEntries(store, 'edits')).filter((e) => e.phase === 'result').map((e) => [e.resolution ?? 'ran', e.checkpoint]), [['ran', tree], ['declined', tree], ['in-flight-reported', tree]]);
  await attempt(edit);
  assert.deepEqual([resolved, taken.length], [4, 3], 'replayed whole: no path resolved, no checkpoint taken');
});
