// git's delta format, written (pack-delta.ts applies it): what a pack's OFS_DELTA entry holds. A delta is the
// base's size and the target's, then instructions: copy a run of the base, or insert new bytes.
// Pure code. The encoder is a greedy one: every few bytes of the base are indexed, the target is
// scanned for the longest match at each position, and a match is also grown backwards into the
// bytes not yet copied. Made for what the journal deltifies: a tree whose one entry changed, a
// commit beside its parent, an entry beside the one before it, a source file a line apart.

/** Bytes a match must have to be copied rather than inserted (a copy costs up to eight). */
const MIN_COPY = 8;
/** Up to this base size every position is indexed; past it, one in STRIDE (like git's blocks). */
const DENSE_BYTES = 64 * 1024;
const STRIDE = 16;
/** Candidate positions tried per target position: repetitive bases (runs of one byte) stay linear. */
const MAX_CANDIDATES = 16;
/** Longest run one copy instruction may name (three size bytes). */
const MAX_COPY = 0xffffff;

/**
 * The delta that turns `base` into `target`, in git's format, or undefined when it would be
 * `limit` bytes or longer (the caller then keeps the object whole).
 */
export function encodeDelta(base: Buffer, target: Buffer, limit = Number.POSITIVE_INFINITY): Buffer | undefined {
  const out: number[] = [];
  pushSize(out, base.length);
  pushSize(out, target.length);
  // What the two share at their start and end is copied as it is; only what lies between is
  // searched (most deltas here: one tree entry's id, a file one entry longer).
  const most = Math.min(base.length, target.length);
  let prefix = 0;
  while (prefix < most && base[prefix] === target[prefix]) prefix++;
  let suffix = 0;
  while (suffix < most - prefix && base[base.length - 1 - suffix] === target[target.length - 1 - suffix]) suffix++;
  if (prefix < MIN_COPY) prefix = 0;
  if (suffix < MIN_COPY) suffix = 0;
  pushCopies(out, 0, prefix);
  const inner = base.subarray(prefix, base.length - suffix);
  const end = target.length - suffix;
  const index = inner.length >= MIN_COPY && end - prefix >= MIN_COPY ? indexBase(inner) : undefined;
  let literalStart = prefix;
  let at = prefix;
  while (index && at + MIN_COPY <= end) {
    const match = longestMatch(inner, target, at, end, index);
    if (!match) {
      at++;
      continue;
    }
    // Grow the match backwards over bytes that would otherwise be inserted.
    let { from, length } = match;
    let start = at;
    while (start > literalStart && from > 0 && inner[from - 1] === target[start - 1]) {
      start--;
      from--;
      length++;
    }
    pushInsert(out, target, literalStart, start);
    pushCopies(out, prefix + from, length);
    at = start + length;
    literalStart = at;
    if (out.length >= limit) return undefined;
  }
  pushInsert(out, target, literalStart, end);
  pushCopies(out, base.length - suffix, suffix);
  return out.length < limit ? Buffer.from(out) : undefined;
}

// A hash table of base positions by the MIN_COPY bytes that start there (every position, or one in
// STRIDE for a large base): `heads` by hash, then each position's next one with the same hash.
interface BaseIndex {
  heads: Int32Array;
  next: Int32Array;
  mask: number;
}

function hashAt(data: Buffer, at: number): number {
  const low = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
  const high = data[at + 4]! | (data[at + 5]! << 8) | (data[at + 6]! << 16) | (data[at + 7]! << 24);
  return (Math.imul(low, 0x9e3779b1) ^ Math.imul(high, 0x85ebca77)) >>> 0;
}

function indexBase(base: Buffer): BaseIndex {
  const step = base.length <= DENSE_BYTES ? 1 : STRIDE;
  const positions = Math.max(1, Math.ceil(base.length / step));
  let size = 16;
  while (size < positions * 2) size *= 2;
  const heads = new Int32Array(size).fill(-1);
  const next = new Int32Array(base.length + 1).fill(-1);
  const mask = size - 1;
  // From the end, so each chain lists earlier positions first.
  const last = Math.floor((base.length - MIN_COPY) / step) * step;
  for (let i = last; i >= 0; i -= step) {
    const h = hashAt(base, i) & mask;
    next[i] = heads[h]!;
    heads[h] = i;
  }
  return { heads, next, mask };
}

// The longest run of the base equal to the target from `at` (MIN_COPY bytes at least).
function longestMatch(base: Buffer, target: Buffer, at: number, end: number, index: BaseIndex): { from: number; length: number } | undefined {
  let best: { from: number; length: number } | undefined;
  let tried = 0;
  for (let from = index.heads[hashAt(target, at) & index.mask]!; from >= 0 && tried < MAX_CANDIDATES; from = index.next[from]!, tried++) {
    let length = 0;
    while (at + length < end && from + length < base.length && base[from + length] === target[at + length]) length++;
    if (length >= MIN_COPY && (!best || length > best.length)) best = { from, length };
  }
  return best;
}

function pushSize(out: number[], size: number): void {
  do {
    let byte = size & 0x7f;
    size = Math.floor(size / 128);
    if (size > 0) byte |= 0x80;
    out.push(byte);
  } while (size > 0);
}

function pushInsert(out: number[], target: Buffer, start: number, end: number): void {
  for (let at = start; at < end; at += 127) {
    const n = Math.min(127, end - at);
    out.push(n);
    for (let i = 0; i < n; i++) out.push(target[at + i]!);
  }
}

function pushCopies(out: number[], offset: number, size: number): void {
  for (let done = 0; done < size; done += MAX_COPY) pushCopy(out, offset + done, Math.min(size - done, MAX_COPY));
}

function pushCopy(out: number[], offset: number, size: number): void {
  const at = out.length;
  let op = 0x80;
  out.push(0);
  for (let i = 0; i < 4; i++) {
    const byte = Math.floor(offset / 2 ** (8 * i)) & 0xff;
    if (byte) {
      op |= 1 << i;
      out.push(byte);
    }
  }
  const encoded = size === 0x10000 ? 0 : size;
  for (let i = 0; i < 3; i++) {
    const byte = (encoded >> (8 * i)) & 0xff;
    if (byte) {
      op |= 1 << (4 + i);
      out.push(byte);
    }
  }
  out[at] = op;
}
