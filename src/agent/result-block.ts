// A tool's result as the model gets it: a tool_result block whose text is cut like any output
// (truncate.ts), followed by its images: the image read_file read (its bytes from the journal's
// blob), and, in runs whose configuration says so (RunConfig.toolImages), an MCP tool's images from
// the result its server returned. Runs recorded before images were sent keep the text line each
// image was (they replay exactly the requests they made).
import type { RunConfig } from '../journal/entry.js';
import type { ImageBlock, TextBlock, ToolResultBlock } from '../model/types.js';
import { truncateForModel } from '../tools/truncate.js';
import type { ToolResult } from '../tools/types.js';

/** The tool_result block answering call `id` with `result`, under the run's configuration. */
export function toolResultBlock(id: string, result: ToolResult, config: Pick<RunConfig, 'outputNote' | 'toolImages'>): ToolResultBlock {
  const text = truncateForModel(result.output, { noteStyle: config.outputNote });
  const images = imagesOf(result, config);
  const content: ToolResultBlock['content'] = images.length ? [{ type: 'text', text } satisfies TextBlock, ...images] : text;
  return { type: 'tool_result', tool_use_id: id, content, ...(result.isError ? { is_error: true } : {}) };
}

// The image blocks of a result: read_file's image (its bytes put back by the tool call), then an
// MCP result's image parts, when the run sends images.
function imagesOf(result: ToolResult, config: Pick<RunConfig, 'toolImages'>): ImageBlock[] {
  const images: ImageBlock[] = [];
  if (result.image && result.imageBytes) images.push(imageBlock(result.image.mediaType, result.imageBytes.toString('base64')));
  if (config.toolImages && Array.isArray(result.mcp?.content)) {
    for (const part of result.mcp.content as Array<Record<string, unknown>>) {
      if (part?.type === 'image' && typeof part.data === 'string' && typeof part.mimeType === 'string')
        images.push(imageBlock(part.mimeType, part.data));
    }
  }
  return images;
}

function imageBlock(mediaType: string, data: string): ImageBlock {
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
}
