// A run's pinned configuration: a new run's made from the build's values and the options, an existing
// run's kept as recorded, a run from before pinning (savepoint 0.1.0) given what that build sent, and
// an option that contradicts what a run recorded refused with the way on, not silently ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_PROMPT } from '../../src/agent/system-prompt.js';
import { UsageError } from '../../src/errors/index.js';
import type { RunConfig, RunRecord } from '../../src/journal/entry.js';
import { assertPinned, DEFAULT_COMPACT_AT, DEFAULT_MAX_TOKENS, runConfig, withInstructions } from '../../src/session/config.js';
import { LEGACY_READ_FILE_DESCRIPTION, LEGACY_RUN_BASH_DESCRIPTION, LEGACY_TOOL_NAMES } from '../../src/session/legacy-config.js';
import type { AnyTool } from '../../src/tools/types.js';

const tool = (name: string, properties: Record<string, unknown> = { path: { type: 'string' } }) =>
  ({ name, description: `${name} today`, inputSchema: { type: 'object', properties, required: [] } }) as unknown as AnyTool;
const TOOLS = [tool('read_file'), tool('run_bash', { command: { type: 'string' }, run_in_background: { type: 'boolean' } }), tool('web_fetch')];
const record = (fields: Partial<RunRecord> = {}) => ({ id: 'fix-it-1a2b', task: 'fix it', status: 'running', attempts: [], ...fields }) as unknown as RunRecord;

test('a new run pins the build: its system prompt, every tool as offered, the default answer length and compaction', () => {
  const config = runConfig(undefined, { model: 'claude-x' }, TOOLS);
  assert.equal(config.model, 'claude-x');
  assert.equal(config.system, SYSTEM_PROMPT);
  assert.deepEqual(config.tools.map((t) => [t.name, t.description]), [['read_file', 'read_file today'], ['run_bash', 'run_bash today'], ['web_fetch', 'web_fetch today']]);
  assert.equal(config.maxTokens, DEFAULT_MAX_TOKENS);
  assert.deepEqual({ enabled: config.compaction.enabled, at: config.compaction.at }, { enabled: true, at: DEFAULT_COMPACT_AT });
  assert.equal(config.toolImages, true);
  assert.equal(config.thinking, undefined);
  assert.equal(config.outputNote, undefined);
});

test('thinking gets room for the answer beyond its budget, and a max-tokens that leaves none is refused', () => {
  assert.equal(runConfig(undefined, { thinking: 2000 }, TOOLS).maxTokens, 2000 + DEFAULT_MAX_TOKENS);
  assert.deepEqual(runConfig(undefined, { thinking: 2000 }, TOOLS).thinking, { budgetTokens: 2000 });
  assert.throws(() => runConfig(undefined, { thinking: 2000, maxTokens: 2000 }, TOOLS), (error: unknown) => error instanceof UsageError && /--thinking 2000 needs a larger --max-tokens than 2000/.test(error.message));
});

test("project instructions follow the system prompt under their file's heading, and the config records their size", () => {
  const config = runConfig(undefined, { compact: false, compactAt: 0.5, contextWindow: 1000 }, TOOLS, { file: 'AGENTS.md', text: '  use tabs\n\n' });
  assert.equal(config.system, `${SYSTEM_PROMPT}\n\n# Project instructions (from AGENTS.md)\n\nuse tabs\n`);
  assert.equal(config.system, withInstructions(SYSTEM_PROMPT, { file: 'AGENTS.md', text: 'use tabs' }));
  assert.deepEqual(config.instructions, { file: 'AGENTS.md', chars: 12 });
  assert.deepEqual(config.compaction, { enabled: false, at: 0.5, contextWindow: 1000 });
});

test('a run keeps the configuration it recorded, whatever the options say now', () => {
  const pinned = { model: 'claude-old', system: 'then', tools: [], maxTokens: 10, compaction: { enabled: true, at: 0.9, contextWindow: 5 } } as RunConfig;
  assert.equal(runConfig(record({ config: pinned }), { model: 'claude-new', maxTokens: 99 }, TOOLS), pinned);
});

test('a run from before pinning is shown only the tools savepoint 0.1.0 had, with its words and inputs', () => {
  const config = runConfig(record({ model: 'claude-0' }), { model: 'ignored' }, TOOLS);
  assert.equal(config.model, 'claude-0');
  assert.deepEqual(config.tools.map((t) => t.name), ['read_file', 'run_bash'], 'web_fetch came later');
  assert.ok(config.tools.every((t) => LEGACY_TOOL_NAMES.includes(t.name)));
  assert.equal(config.tools[0]!.description, LEGACY_READ_FILE_DESCRIPTION);
  assert.equal(config.tools[1]!.description, LEGACY_RUN_BASH_DESCRIPTION);
  assert.deepEqual(Object.keys((config.tools[1]!.input_schema as { properties: object }).properties), ['command'], 'run_in_background came later');
  assert.equal(config.outputNote, 'journal');
  assert.equal(config.maxTokens, DEFAULT_MAX_TOKENS);
  assert.equal(config.toolImages, undefined, 'its images were text lines');
});

test('an option a run recorded otherwise is refused, each clash named, with how to change models within the run', () => {
  const pinned = { model: 'claude-a', system: '', tools: [], maxTokens: 100, compaction: { enabled: true, at: 0.8, contextWindow: 1000 } } as RunConfig;
  assert.doesNotThrow(() => assertPinned(undefined, { model: 'anything', maxTokens: 1 }), 'a new run takes any');
  assert.doesNotThrow(() => assertPinned(record({ config: pinned }), { model: 'claude-a', maxTokens: 100, compactAt: 0.8, contextWindow: 1000 }), 'the same values are no clash');
  assert.throws(() => assertPinned(record({ config: pinned }), { model: 'claude-b', thinking: 500, compact: false }), (error: unknown) => {
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /Run fix-it-1a2b is pinned/);
    assert.match(error.message, /--model claude-b \(it uses claude-a\), --thinking 500 \(it uses none\), --no-compact \(it compacts\)/);
    assert.match(error.message, /Drop those options/);
    assert.match(error.message, /savepoint continue --run fix-it-1a2b --model claude-b/);
    return true;
  });
  assert.throws(() => assertPinned(record({ config: pinned }), { contextWindow: 5 }), (error: unknown) => error instanceof UsageError && /Drop that option/.test(error.message) && !/continue --run/.test(error.message));
  // A run from before pinning is held to its model alone.
  assert.throws(() => assertPinned(record({ model: 'claude-0' }), { model: 'claude-1' }), UsageError);
  assert.doesNotThrow(() => assertPinned(record({ model: 'claude-0' }), { maxTokens: 5 }));
});
