// A tool's result as the model gets it: its text cut like any output, an error flagged, then its
// images (read_file's bytes; an MCP result's images only in runs whose configuration sends them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolResultBlock } from '../../src/agent/result-block.js';
import { MODEL_OUTPUT_MAX_LINES } from '../../src/tools/truncate.js';
import type { ToolResult } from '../../src/tools/types.js';

const result = (fields: Partial<ToolResult>) => ({ output: 'ok', ...fields }) as ToolResult;

test('a plain result is its text, and an error says so', () => {
  assert.deepEqual(toolResultBlock('call-1', result({ output: 'done' }), {}), { type: 'tool_result', tool_use_id: 'call-1', content: 'done' });
  assert.deepEqual(toolResultBlock('call-2', result({ output: 'no such file', isError: true }), {}), { type: 'tool_result', tool_use_id: 'call-2', content: 'no such file', is_error: true });
});

test("a long output is cut from the middle, with the note of the run's configuration", () => {
  const long = Array.from({ length: MODEL_OUTPUT_MAX_LINES + 500 }, (_, i) => `line ${i}`).join('\n');
  const now = toolResultBlock('c', result({ output: long }), {}).content as string;
  assert.match(now, /^line 0\n/);
  assert.match(now, /\nline 2499$/);
  assert.match(now, /cut from the middle; to see them, narrow the command/);
  assert.match(toolResultBlock('c', result({ output: long }), { outputNote: 'journal' }).content as string, /cut; the full output is in the journal/);
});

test("read_file's image follows the text, and an MCP result's images only when the run sends tool images", () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
  const withImages = result({ output: 'an image', image: { mediaType: 'image/png' } as ToolResult['image'], imageBytes: png, mcp: { content: [{ type: 'image', data: 'R0lG', mimeType: 'image/gif' }, { type: 'text', text: 'x' }, { type: 'image', data: 1 }] } } as Partial<ToolResult>);
  const block = toolResultBlock('c', withImages, { toolImages: true });
  assert.deepEqual(block.content, [
    { type: 'text', text: 'an image' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
    { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lG' } },
  ]);
  const older = toolResultBlock('c', withImages, {});
  assert.equal((older.content as unknown[]).length, 2, "a run recorded before tool images keeps the MCP images' text only");
  assert.deepEqual(toolResultBlock('c', result({ image: { mediaType: 'image/png' } as ToolResult['image'] }), {}).content, 'ok', 'no bytes, no image');
});
