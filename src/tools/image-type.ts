// Which image a file is, by its first bytes (never by its name): the four formats the Messages API
// takes as image blocks. read_file answers those with an image block; any other binary file is refused.

/** The largest image read_file hands the model (the API's own limit for one image is 5 MB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The media type of the image whose file starts with `head` (12 bytes are enough), or undefined. */
export function imageMediaType(head: Buffer): string | undefined {
  const starts = (bytes: number[] | string, at = 0) => {
    const expected = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
    return head.length >= at + expected.length && head.subarray(at, at + expected.length).equals(expected);
  };
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts('GIF87a') || starts('GIF89a')) return 'image/gif';
  if (starts('RIFF') && starts('WEBP', 8)) return 'image/webp';
  return undefined;
}
