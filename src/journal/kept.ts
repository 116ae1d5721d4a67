// Entries as a replay holds them: as bytes, off the heap, parsed only when replay reaches their step.
// A parsed entry costs two bytes a character once its output holds one character that is not
// Latin-1 (a ✔, a box line), and a long run's parsed entries are what the collector copies while
// they live: a 10,000-step run's took 42 MB of heap, and made V8 grow its young generation to its
// 32 MB maximum. As bytes they take 21 MB, and only a few small objects stay on the heap. Pure code.
import { parseEntry, type JournalEntry } from './entry.js';
import { stepFilePath, type Phase } from './layout.js';

/**
 * An entry held as bytes: what a lookup compares (step, phase, kind, key) parsed, the rest as JSON
 * in `chunk[at, at + length)`: the entry file's own bytes (`whole`), or the entry without its
 * result, for one whose result is never handed back (a finished step's intent) or too big to keep
 * (KEPT_BYTES): that one holds its blob id, `oid`, read again when replay reaches it (see
 * `supplyKept`).
 */
export interface KeptEntry {
  run: string;
  step: number;
  phase: Phase;
  kind: string;
  key: string;
  whole: boolean;
  chunk: Buffer;
  at: number;
  length: number;
  oid?: string;
  /** The entry's batch (JournalEntry.batch), which History checks a hole against. */
  batch?: [number, number];
  /** The whole entry read again from `oid` for its lookup (see supplyKept). */
  supplied?: Buffer;
}

/** An entry file larger than this is not kept in memory for replay, only its blob id and the entry without its result. */
export const KEPT_BYTES = 64 * 1024;

/** Whether `held` is a KeptEntry (and not a parsed JournalEntry). */
export function isKept(held: JournalEntry | KeptEntry): held is KeptEntry {
  return 'whole' in held;
}

/** Where a kept entry lives on the branch (for errors). */
export function keptPath(kept: KeptEntry): string {
  return stepFilePath(kept.run, kept.step, kept.kind, kept.phase);
}

/**
 * The whole entry `kept` stands for, parsed from its bytes (or those `supplyKept` gave it); for one
 * kept without its result, that (result null). Bytes read again from the blob are checked as when
 * first read (the bytes kept were checked then, and nothing changes them).
 */
export function expandKept(kept: KeptEntry): JournalEntry {
  const expected = { run: kept.run, step: kept.step, kind: kept.kind, phase: kept.phase };
  if (kept.supplied) return parseEntry(kept.supplied.toString('utf8'), keptPath(kept), expected);
  const text = kept.chunk.toString('utf8', kept.at, kept.at + kept.length);
  return JSON.parse(text) as JournalEntry;
}

/** The entry's bytes read again from its blob (an entry too big to keep, see KeptEntry.oid), until its step is handed back. */
export function supplyKept(kept: KeptEntry, bytes: Buffer): void {
  kept.supplied = bytes;
}

/** An entry without its result (null, when it has one): what History.entries() lists of a step not yet handed back. */
export function withoutResult(entry: JournalEntry): JournalEntry {
  return 'result' in entry ? { ...entry, result: null } : entry;
}

/**
 * Bytes copied one after another into chunks of their own. A blob read from a pack is a slice of
 * an 8 KB pool slab (Buffer.allocUnsafe) that would otherwise stay whole, with the garbage around
 * it; a chunk is freed once nothing kept in it is held.
 */
export class ByteArena {
  private chunk = Buffer.allocUnsafeSlow(0);
  private used = 0;

  /**
   * Keeps `entry`: whole (the file's own `bytes`), or without its result (bytes undefined); `names`
   * are its run and kind as strings shared by every entry kept.
   */
  keep(entry: JournalEntry, bytes: Buffer | undefined, names: { run: string; kind: string }, oid?: string): KeptEntry {
    const data = bytes ?? Buffer.from(JSON.stringify(withoutResult(entry)));
    if (this.used + data.length > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(ARENA_CHUNK_BYTES, data.length));
      this.used = 0;
    }
    const at = this.used;
    data.copy(this.chunk, at);
    this.used += data.length;
    const kept: KeptEntry = {
      run: names.run,
      step: entry.step,
      phase: entry.phase,
      kind: names.kind,
      key: entry.key,
      whole: bytes !== undefined,
      chunk: this.chunk,
      at,
      length: data.length,
    };
    if (oid) kept.oid = oid;
    if (entry.batch) kept.batch = entry.batch;
    return kept;
  }
}

const ARENA_CHUNK_BYTES = 256 * 1024;
