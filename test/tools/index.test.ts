import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTools } from '../../src/tools/index.js';

describe('createTools', () => {
  const tools = createTools('/nonexistent-root');

  it('builds the built-in tools in their fixed order', () => {
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['read_file', 'write_file', 'edit_file', 'run_bash', 'list_files', 'search', 'web_fetch', 'bash_output', 'kill_bash'],
    );
  });

  it('gives each a description and a closed object schema with the fixed parameter names', () => {
    const params = Object.fromEntries(tools.map((tool) => [tool.name, [Object.keys(tool.inputSchema.properties), tool.inputSchema.required ?? []]]));
    assert.deepEqual(params, {
      read_file: [['path', 'offset', 'limit'], ['path']],
      write_file: [['path', 'content'], ['path', 'content']],
      edit_file: [['path', 'old_string', 'new_string', 'replace_all'], ['path', 'old_string', 'new_string']],
      run_bash: [['command', 'timeout_ms', 'run_in_background'], ['command']],
      list_files: [['path'], []],
      search: [['pattern', 'path'], ['pattern']],
      web_fetch: [['url', 'max_bytes'], ['url']],
      bash_output: [['id'], ['id']],
      kill_bash: [['id'], ['id']],
    });
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.inputSchema.additionalProperties, false);
      assert.ok(tool.description.length > 80, tool.name);
      for (const property of Object.values(tool.inputSchema.properties)) assert.ok((property as { description?: string }).description);
    }
  });

  it('marks writes, edits, commands and fetches as needing approval and changing files', () => {
    const inputs: Record<string, Record<string, unknown>> = {
      read_file: { path: 'a' },
      write_file: { path: 'a', content: '' },
      edit_file: { path: 'a', old_string: 'x', new_string: 'y' },
      run_bash: { command: 'ls' },
      list_files: {},
      search: { pattern: 'x' },
      web_fetch: { url: 'https://example.com/' },
      bash_output: { id: 'bg-1' },
      kill_bash: { id: 'bg-1' },
    };
    const flags = tools.map((tool) => [tool.name, tool.needsApproval(inputs[tool.name]), tool.mayChangeFiles(inputs[tool.name])]);
    assert.deepEqual(flags, [
      ['read_file', false, false],
      ['write_file', true, true],
      ['edit_file', true, true],
      ['run_bash', true, true],
      ['list_files', false, false],
      ['search', false, false],
      ['web_fetch', true, false],
      // A background command's own read and stop need no approval (its start asked); what it wrote meanwhile is checkpointed after them.
      ['bash_output', false, true],
      ['kill_bash', false, true],
    ]);
  });

  it('never throws from describe or execute, whatever the input', async () => {
    for (const tool of tools) {
      for (const input of [undefined, null, 42, 'text', [], { path: {} }]) {
        assert.equal(typeof tool.describe(input), 'string');
        const result = await tool.execute(input);
        assert.equal(result.isError, true, `${tool.name} ${JSON.stringify(input)}`);
        assert.match(result.output, /input/i);
      }
    }
  });
});
