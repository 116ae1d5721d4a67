// File names are bytes, not text: git and Linux allow any byte but NUL and `/` in a name, and a
// name need not be UTF-8 (a Latin-1 `caf\xe9.txt` from an old archive). JavaScript strings cannot
// hold bytes, and Node decodes a non-UTF-8 name to U+FFFD, which names another file (or none). So
// a name read from git or the file system is decoded here, losslessly, the way Python's
// `surrogateescape` does: valid UTF-8 as its text, and each byte that is not part of a valid UTF-8
// sequence as the lone surrogate U+DC00 + byte (U+DC80..U+DCFF, which no valid UTF-8 decodes to).
// It is encoded back to the very bytes where it meets git or the file system again (a tree entry,
// an lstat, a write). Names stay strings in between because they are Map keys and JSON values all
// the way through the checkpoint code; the bytes are what goes in and what comes out.

const ESCAPE_BASE = 0xdc00;
// Any surrogate code unit: a string without one is plain UTF-8 text, encoded as Buffer does.
const SURROGATE = /[\ud800-\udfff]/;

/** `bytes` (a name, or git's NUL-separated output) as a string that pathToBytes turns back into the same bytes. */
export function pathFromBytes(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let out = '';
  let at = 0;
  let plain = 0; // start of the run of valid UTF-8 not yet copied
  while (at < bytes.length) {
    const length = sequenceLength(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    out += bytes.toString('utf8', plain, at) + String.fromCharCode(ESCAPE_BASE + bytes[at]!);
    plain = ++at;
  }
  return out + bytes.toString('utf8', plain, at);
}

/** The bytes of a name that pathFromBytes gave (an escaped byte becomes that byte again). */
export function pathToBytes(path: string): Buffer {
  if (!SURROGATE.test(path)) return Buffer.from(path, 'utf8');
  const parts: Buffer[] = [];
  let plain = 0;
  for (let i = 0; i < path.length; i++) {
    const unit = path.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < path.length) {
      const next = path.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a surrogate pair: an ordinary character beyond U+FFFF
        continue;
      }
    }
    if (unit < 0xdc80 || unit > 0xdcff) continue; // other lone surrogates: U+FFFD, as Buffer.from writes them
    parts.push(Buffer.from(path.slice(plain, i), 'utf8'), Buffer.of(unit - ESCAPE_BASE));
    plain = i + 1;
  }
  parts.push(Buffer.from(path.slice(plain), 'utf8'));
  return Buffer.concat(parts);
}

/** Whether `path` holds a byte that is not UTF-8 (an escape of pathFromBytes). */
export function hasRawBytes(path: string): boolean {
  return SURROGATE.test(path) && /[\udc80-\udcff]/.test(path.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
}

/** `path` as the file system takes it: the string itself when it is UTF-8, else its bytes. */
export function fsPath(path: string): string | Buffer {
  return hasRawBytes(path) ? pathToBytes(path) : path;
}

/** The byte length of `path` as git and the file system count it. */
export function pathByteLength(path: string): number {
  return SURROGATE.test(path) ? pathToBytes(path).length : Buffer.byteLength(path);
}

// Buffer.isUtf8 where Node has it (18.14+; 20 always does), else a strict decoder.
const strict = new TextDecoder('utf-8', { fatal: true });
function isUtf8(bytes: Buffer): boolean {
  const native = (Buffer as unknown as { isUtf8?: (b: Buffer) => boolean }).isUtf8;
  if (native) return native(bytes);
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

// The length of the valid UTF-8 sequence at `at` (1-4), or 0 when the byte there starts none
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
function sequenceLength(bytes: Buffer, at: number): number {
  const lead = bytes[at]!;
  if (lead < 0x80) return 1;
  const cont = (i: number, lo = 0x80, hi = 0xbf) => at + i < bytes.length && bytes[at + i]! >= lo && bytes[at + i]! <= hi;
  if (lead >= 0xc2 && lead <= 0xdf) return cont(1) ? 2 : 0;
  if (lead === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (lead === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (lead >= 0xe1 && lead <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (lead === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (lead >= 0xf1 && lead <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (lead === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
