// The files that decide what runs (settings, .mcp.json, commands, hooks, instruction files), matched
// whatever their case, at the root (folders and .mcp.json) or in any folder (AGENTS.md, CLAUDE.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isControlPath } from '../../src/tools/control-files.js';

test('the control folders and everything in them, .mcp.json at the root, instruction files anywhere', () => {
  for (const path of ['.savepoint', '.savepoint/settings.json', '.claude/commands/x.md', './.CLAUDE/hooks', '.mcp.json', '.MCP.JSON', 'AGENTS.md', 'pkg/app/claude.md', 'a\\b\\AGENTS.md']) assert.equal(isControlPath(path), true, path);
});

test('other files, .mcp.json below the root, and look-alike names are not', () => {
  for (const path of ['', '.', 'src/a.ts', 'pkg/.mcp.json', 'docs/.savepoint/x', 'AGENTS.md.bak', 'my-CLAUDE.md', '.savepointrc']) assert.equal(isControlPath(path), false, path);
});
