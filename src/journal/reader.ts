// Reading runs back from the branch: a run's metadata and its entries in order, each validated.
import { CorruptEntryError } from '../errors/index.js';
import { parseEntry, parseRunRecord, type JournalEntry, type RunRecord } from './entry.js';
import { parseStepFileName, runRecordPath } from './layout.js';
import { TREE_MODE } from './git-object.js';
import type { JournalStore } from './store.js';

/** A run's run.json at the tip, or undefined when the run does not exist. */
export async function readRunRecord(store: JournalStore, run: string): Promise<RunRecord | undefined> {
  const path = runRecordPath(run);
  const bytes = await store.fileAt(path);
  return bytes ? parseRunRecord(bytes.toString('utf8'), path) : undefined;
}

/** Every entry of a run, in step order (an intent just before its result). */
export async function readRunEntries(store: JournalStore, run: string): Promise<JournalEntry[]> {
  const stepsPath = `runs/${run}/steps`;
  const shards = await store.treeAt(stepsPath);
  if (!shards) return [];
  const entries: JournalEntry[] = [];
  for (const shard of [...shards.keys()].sort()) {
    const shardEntry = shards.get(shard)!;
    const shardPath = `${stepsPath}/${shard}`;
    if (shardEntry.mode !== TREE_MODE) throw new CorruptEntryError(shardPath, 'it should be a directory of step files');
    const files = await store.tree(shardEntry.oid);
    const names = [...files.keys()].sort();
    const texts = await Promise.all(names.map((name) => store.objects.read(files.get(name)!.oid, 'blob')));
    names.forEach((name, i) => {
      const path = `${shardPath}/${name}`;
      const parsed = parseStepFileName(name);
      if (!parsed) throw new CorruptEntryError(path, 'its name is not <step>-<kind>[.intent].json');
      entries.push(parseEntry(texts[i]!.toString('utf8'), path, { run, ...parsed }));
    });
  }
  return entries;
}

/** The ids of every run on the branch. */
export async function listRunIds(store: JournalStore): Promise<string[]> {
  const runs = await store.treeAt('runs');
  return runs ? [...runs.keys()].filter((name) => runs.get(name)!.mode === TREE_MODE).sort() : [];
}
