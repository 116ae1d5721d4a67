// An MCP tool's result as a savepoint tool result: the whole result as the server sent it (text,
// images, audio, resources, structured content, isError) is kept, and the model reads it as text:
// text as it is, a resource's text under its address, binary parts as a line saying what they were.
// Tested in test/tools/mcp/config.test.ts.
import { oneLine } from '../../format/text.js';
import type { ToolResult } from '../types.js';

/** The savepoint result of an MCP `tools/call` answer. */
export function mcpToolResult(result: Record<string, unknown>): ToolResult {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map(describePart);
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  const isError = result.isError === true;
  const output = parts.join('\n') || '(no output)';
  const first = oneLine(output.trim(), 60);
  return { output, isError, summary: isError ? `error: ${first}` : first, mcp: { ...result } };
}

function describePart(part: Record<string, unknown>): string {
  switch (part.type) {
    case 'text':
      return String(part.text ?? '');
    case 'image':
    case 'audio':
      return `[${part.type}: ${String(part.mimeType ?? 'unknown type')}, ${sizeOf(part.data)}]`;
    case 'resource': {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri ?? '');
      if (typeof resource.text === 'string') return `[resource: ${uri}]\n${resource.text}`;
      return `[resource: ${uri}, ${String(resource.mimeType ?? 'unknown type')}, ${sizeOf(resource.blob)}]`;
    }
    case 'resource_link':
      return `[resource link: ${String(part.name ?? '')} <${String(part.uri ?? '')}>]`;
    default:
      return `[${String(part.type ?? 'unknown')} content]`;
  }
}

// The size of base64 data, decoded.
function sizeOf(base64: unknown): string {
  const length = typeof base64 === 'string' ? Math.floor((base64.replace(/=+$/, '').length * 3) / 4) : 0;
  return length >= 1024 ? `${(length / 1024).toFixed(1)} KB` : `${length} bytes`;
}
