// Reading runs back from the branch: a run's metadata and its entries in order, each validated.
import { CorruptEntryError, ObjectTooLargeError } from '../errors/index.js';
import { formatBytes } from '../format/numbers.js';
import { parseEntry, type JournalEntry, type RunRecord } from './entry.js';
import { parseRunRecord } from './parse-run.js';
import { MAX_ENTRY_BYTES, MAX_RUN_RECORD_BYTES } from './fields.js';
import { ByteArena, KEPT_BYTES, type KeptEntry } from './kept.js';
import { parseStepFileName, runRecordPath, shardName, type Phase } from './layout.js';
import { parseTree, TREE_MODE, type Tree } from '../git/git-object.js';
import type { JournalStorage } from './journal-storage.js';

/** A run's run.json at the tip, or undefined when the run does not exist. */
export async function readRunRecord(store: JournalStorage, run: string): Promise<RunRecord | undefined> {
  const path = runRecordPath(run);
  const bytes = await sized(path, undefined, () => store.fileAt(path, MAX_RUN_RECORD_BYTES));
  return bytes ? parseRunRecord(bytes.toString('utf8'), path) : undefined;
}

/**
 * The bytes of entry file `file`, its size checked from the object's header first: one larger than
 * MAX_ENTRY_BYTES (a fetched journal's, since savepoint writes none) is CorruptEntryError, unread.
 */
export function readEntryBytes(store: JournalStorage, file: { path: string; step?: number; oid: string }): Promise<Buffer> {
  return sized(file.path, file.step, () => store.objects.read(file.oid, 'blob', MAX_ENTRY_BYTES));
}

// A read whose object was refused for its size becomes the record's own error, naming its path.
async function sized<T>(path: string, step: number | undefined, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ObjectTooLargeError)) throw error;
    const { size, max } = error.data;
    throw new CorruptEntryError(
      path,
      `it is ${formatBytes(size)} (${size} bytes), more than the ${formatBytes(max)} savepoint reads of one (it writes none larger), so it was not read`,
      step,
    );
  }
}

/** One entry file of a run as its shard trees list it: where it is, what its name says, its blob. */
export interface StepFile {
  path: string;
  step: number;
  kind: string;
  phase: Phase;
  oid: string;
}

/**
 * A run's entry files in step order (an intent just before its result), from its trees alone: no
 * entry is read. Throws CorruptEntryError for a shard that is not a directory or a misnamed file.
 */
export async function listRunStepFiles(store: JournalStorage, run: string): Promise<StepFile[]> {
  const shards = await shardTrees(store, run);
  const listed = new Array<StepFile[]>(shards.length);
  for (const [i, shard] of shards.entries()) listed[i] = shardFiles(shard.path, parseTree(await store.objects.read(shard.oid, 'tree')));
  return listed.flat();
}

// A run's shard directories, in step order: each one's path and tree id.
async function shardTrees(store: JournalStorage, run: string): Promise<Array<{ path: string; oid: string }>> {
  const stepsPath = `runs/${run}/steps`;
  const shards = await store.treeAt(stepsPath);
  if (!shards) return [];
  return [...shards.keys()].sort().map((shard) => {
    const shardEntry = shards.get(shard)!;
    const path = `${stepsPath}/${shard}`;
    if (shardEntry.mode !== TREE_MODE) throw new CorruptEntryError(path, 'it should be a directory of step files');
    return { path, oid: shardEntry.oid };
  });
}

// The entry files of one shard's tree, in step order.
function shardFiles(shardPath: string, names: Tree): StepFile[] {
  const files: StepFile[] = [];
  for (const name of [...names.keys()].sort()) {
    const path = `${shardPath}/${name}`;
    const parsed = parseStepFileName(name);
    if (!parsed) throw new CorruptEntryError(path, 'its name is not <step>-<kind>[.intent].json');
    files.push({ path, ...parsed, oid: names.get(name)!.oid });
  }
  return files;
}

// A run's entry files a shard at a time, in step order (see listRunStepFiles); from the shard of
// step `from` on when given (its earlier shards are not read).
async function* shardsOf(store: JournalStorage, run: string, from = 0): AsyncGenerator<StepFile[]> {
  const first = Number(shardName(from));
  for (const shard of await shardTrees(store, run)) {
    if (Number(shard.path.slice(shard.path.lastIndexOf('/') + 1)) < first) continue;
    // Read past the store's tree cache, which keeps every tree for the process's life: a long run's
    // shards are listed once, and would hold 150 bytes a step.
    yield shardFiles(shard.path, await store.objects.readTree(shard.oid));
  }
}

/**
 * Reads and checks the entries of `files` (from listRunStepFiles), in their order, each parsed as
 * it is read, so their texts are never all held at once.
 */
export async function readStepFiles(store: JournalStorage, run: string, files: readonly StepFile[]): Promise<JournalEntry[]> {
  const entries = new Array<JournalEntry>(files.length);
  let i = 0;
  try {
    // Straight from the store, not through readEntryBytes: one async frame less for each of
    // thousands of entries.
    for (; i < files.length; i++) {
      const file = files[i]!;
      const body = await store.objects.read(file.oid, 'blob', MAX_ENTRY_BYTES);
      entries[i] = parseEntry(body.toString('utf8'), file.path, { run, step: file.step, kind: file.kind, phase: file.phase });
    }
  } catch (error) {
    // An entry refused for its size is the record's own error, naming its path and step.
    if (!(error instanceof ObjectTooLargeError)) throw error;
    await sized(files[i]!.path, files[i]!.step, () => Promise.reject(error));
  }
  return entries;
}

/**
 * Every entry of a run as a replay holds it (KeptEntry: bytes, not parsed objects), in step order
 * (only those after step `after` when given: a run opened from its snapshot; their shards alone are read),
 * each read and checked whole as readStepFiles does. A shard is listed, read and dropped at a time;
 * a finished step's intent, and an entry over KEPT_BYTES, keep the entry without its result.
 * `onEntry` is given each entry parsed whole, once checked (to add up what later needs of it).
 */
export async function readKeptEntries(
  store: JournalStorage,
  run: string,
  onEntry?: (entry: JournalEntry, oid: string) => void,
  after = 0,
): Promise<KeptEntry[]> {
  const kept: KeptEntry[] = [];
  const arena = new ByteArena();
  const kinds = new Map<string, string>();
  for await (const all of shardsOf(store, run, after + 1)) {
    const files = after > 0 ? all.filter((file) => file.step > after) : all;
    // One at a time, each dropped once parsed: a batch of 100 KB outputs read together would hold
    // them all at once.
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      const bytes = await readEntryBytes(store, file);
      const entry = parseEntry(bytes.toString('utf8'), file.path, { run, step: file.step, kind: file.kind, phase: file.phase });
      onEntry?.(entry, file.oid);
      let kind = kinds.get(entry.kind);
      if (kind === undefined) kinds.set(entry.kind, (kind = entry.kind));
      const next = files[i + 1];
      const finished = entry.phase === 'intent' && next?.step === entry.step && next.phase === 'result';
      const big = bytes.length > KEPT_BYTES;
      kept.push(arena.keep(entry, finished || big ? undefined : bytes, { run, kind }, big && !finished ? file.oid : undefined));
    }
  }
  return kept;
}

/** Every entry of a run, in step order (an intent just before its result). */
export async function readRunEntries(store: JournalStorage, run: string): Promise<JournalEntry[]> {
  return readStepFiles(store, run, await listRunStepFiles(store, run));
}

/** The ids of every run on the branch. */
export async function listRunIds(store: JournalStorage): Promise<string[]> {
  const runs = await store.treeAt('runs');
  return runs ? [...runs.keys()].filter((name) => runs.get(name)!.mode === TREE_MODE).sort() : [];
}
