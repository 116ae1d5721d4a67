// Rolling the journal's small packs up into one, so they never pile up. Every append writes a pack
// of its own (pack-file.ts): past 50 packs, the user's next `git commit` would run `git gc --auto`,
// and undeltified, a journal takes ten times the room of a JSONL session. So once enough small
// packs have gathered, they are rolled up, the way `git repack --geometric=2` keeps packs in a
// geometric progression: the smallest packs, and any pack not at least twice the size of all those
// below it, go into one new pack. A small roll-up copies the packs' entries into one as they are
// (in this process: forking git would stop it for milliseconds); a large one, and the last one of a
// run, are deltified by git itself in the background (`git pack-objects --stdin-packs`, which names
// each object by its path so that consecutive versions of a tree or step file, a line apart, become
// deltas of a few bytes; pack-objects.ts), together with the loose objects this process wrote for
// checkpoints. The new pack is made durable (its files and the directory fsynced) before any pack
// or loose file it replaces is removed, so a kill or a power cut at any point leaves every object
// in at least one place.
// Only packs that savepoint could have made are touched: none with a .keep, .promisor, .mtimes or
// .bitmap beside it, none over ROLL_MAX_BYTES, none a multi-pack-index lists (`git maintenance`
// writes one; removing a pack it lists would need it rewritten). One process at a time rolls up
// (rollup-lock.ts).
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { rename, rm, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DirectorySync, syncPathAsync } from '../os/durable-file.js';
import { removeOrphanPackFiles } from './leftovers.js';
import { tryRollupLock } from '../locks/rollup-lock.js';
import { packObjects } from './pack-objects.js';
import { concatenatePacks, writePackFiles } from './pack-file.js';
import { indexCount, indexIds, INDEX_IDS, isIndexV2 } from './pack-format.js';
import { addHistoryDeltas } from './history-deltas.js';
import { loosePath } from './git-object.js';

/** A roll-up starts once this many small packs are in the pack directory. */
export const ROLL_TRIGGER_PACKS = 16;

/** A roll-up of this many bytes of packs or more is deltified by git; smaller ones are copied together. */
export const DELTIFY_BYTES = 512 * 1024;

/** A run's end rolls every small pack into one while they come to no more than this (else the ones the geometric progression picks). */
export const TIDY_ALL_BYTES = 2 * 1024 * 1024;

/** With this many loose objects of this process waiting, the next roll-up takes them in (through git). */
const LOOSE_TRIGGER = 1000;

/** Packs larger than this are never rolled up (a clone's pack, a `git gc`'s). */
export const ROLL_MAX_BYTES = 8 * 1024 * 1024;

/** A pack in the pack directory: its path without the extension, size, object count, and when it was written (mtime). */
interface PackInfo {
  base: string;
  bytes: number;
  count: number;
  mtime: number;
}

/** What one roll-up did: how many packs and loose objects went into the new pack. */
export interface RollupResult {
  packs: number;
  loose: number;
  objects: number;
  /** The new pack's path (`.pack`), or undefined when there was nothing to roll up. */
  pack?: string;
  /** The paths of the packs rolled up and removed. */
  removed: string[];
  /** Whether git deltified the new pack (else the packs' entries were copied as they were). */
  deltified: boolean;
}

/** The roll-ups of one objects directory: at most one in flight per process. */
export class PackRollup {
  private readonly objectsDir: string;
  private readonly packDir: string;
  private readonly loose = new Set<string>();
  // Packs this process made by copying packs together (undeltified): a run's end deltifies one
  // even when it is the only pack left.
  private readonly copied = new Set<string>();
  private inFlight: Promise<RollupResult | undefined> | undefined;
  private appendsSinceLook = 0;
  // The size and object count of each pack looked at, by path without extension.
  private readonly sizes = new Map<string, { bytes: number; count: number; mtime: number }>();
  /** Told of each finished roll-up (the process's pack reader forgets the removed packs). */
  onRolled?: (result: RollupResult) => void;

  constructor(objectsDir: string) {
    this.objectsDir = objectsDir;
    this.packDir = join(objectsDir, 'pack');
  }

  /** Notes loose objects this process wrote (checkpoints): the next roll-up packs them and removes the files. */
  noteLoose(oids: Iterable<string>): void {
    for (const oid of oids) this.loose.add(oid);
  }

  /**
   * Called after every append: looks at the pack directory every few appends and starts a roll-up
   * in the background when it is due. Never throws; a roll-up that fails leaves everything as it was.
   */
  afterAppend(): void {
    if (this.inFlight || ++this.appendsSinceLook < 4) return;
    this.appendsSinceLook = 0;
    // A failed roll-up is retried later; nothing was removed.
    this.serially(() => this.rollPlanned(() => this.plan(ROLL_TRIGGER_PACKS))).catch(() => undefined);
  }

  /** Waits for the roll-up in flight, if any (a run's end, tests). */
  async settle(): Promise<RollupResult | undefined> {
    return this.inFlight?.catch(() => undefined);
  }

  /** Rolls up now every small pack (`all`), or whatever is due, waiting for it. */
  async rollNow(all = false): Promise<RollupResult | undefined> {
    return this.serially(() => this.rollPlanned(() => this.plan(all ? 'all' : ROLL_TRIGGER_PACKS)));
  }

  /**
   * At a run's end: rolls every small pack into one pack deltified by git while they come to at
   * most TIDY_ALL_BYTES together (a journal's first few thousand steps), else the packs that break
   * the geometric progression, however few; so a finished run leaves its objects deltified.
   */
  async tidy(): Promise<RollupResult | undefined> {
    const planned = () => {
      const everything = this.plan('all');
      if (!everything || everything.packs.reduce((total, p) => total + p.bytes, 0) <= TIDY_ALL_BYTES) return everything;
      // The progression's picks, and every pack this process copied together: left as it is, such a
      // pack keeps its objects whole (a run's last hundred appends, 300 KB where deltified they take 40).
      const picked = new Set(this.plan(2)?.packs.map((p) => p.base));
      const packs = everything.packs.filter((p) => picked.has(p.base) || this.copied.has(p.base));
      return packs.length ? { packs } : undefined;
    };
    return this.serially(() => this.rollPlanned(planned, true));
  }

  // Runs `work` once the roll-up before it has ended, so that one process never has two at once
  // (two could make the same pack, and one remove it while the other still renames its index).
  // Each plans when its turn comes, from the pack directory as the one before left it.
  private serially(work: () => Promise<RollupResult | undefined>): Promise<RollupResult | undefined> {
    const next = (this.inFlight ?? Promise.resolve(undefined)).catch(() => undefined).then(work);
    const tracked = next.finally(() => {
      if (this.inFlight === tracked) this.inFlight = undefined;
    });
    tracked.catch(() => undefined); // the caller of `next` hears of a failure; this copy must not go unhandled
    this.inFlight = tracked;
    return next;
  }

  // A roll-up of what `planned` picks, if anything, under the roll-up lock (held by another process:
  // skipped till the next look), planned again once held: that process may just have rolled them up.
  private async rollPlanned(planned: () => { packs: PackInfo[] } | undefined, deltify = false): Promise<RollupResult | undefined> {
    if (!planned()) return undefined;
    const lock = tryRollupLock(this.objectsDir);
    if (!lock) return undefined;
    try {
      const plan = planned();
      return plan ? await this.roll(plan.packs, [...this.loose], deltify || this.shouldDeltify(plan.packs)) : undefined;
    } finally {
      lock.release();
    }
  }

  private shouldDeltify(packs: PackInfo[]): boolean {
    return this.loose.size >= LOOSE_TRIGGER || packs.reduce((total, p) => total + p.bytes, 0) >= DELTIFY_BYTES;
  }

  // Which packs to roll up, or undefined when none is due: fewer than `trigger` candidates, or a
  // multi-pack-index of a kind we cannot read. 'all': every candidate, progression or not.
  private plan(trigger: number | 'all' = ROLL_TRIGGER_PACKS): { packs: PackInfo[] } | undefined {
    const all = trigger === 'all';
    let names: string[];
    try {
      names = readdirSync(this.packDir);
    } catch {
      return undefined;
    }
    const listed = names.includes('multi-pack-index') ? multiPackIndexPacks(join(this.packDir, 'multi-pack-index')) : new Set<string>();
    if (!listed || names.includes('multi-pack-index.d')) return undefined;
    // Most looks find too few packs to roll: one readdir, nothing else.
    if (!all && names.filter((name) => name.endsWith('.idx')).length < trigger) return undefined;
    const present = new Set(names);
    removeOrphanPackFiles(this.packDir, names, present);
    for (const base of this.sizes.keys()) if (!present.has(`${base.slice(this.packDir.length + 1)}.idx`)) this.sizes.delete(base);
    const candidates: PackInfo[] = [];
    for (const name of names) {
      if (!name.endsWith('.idx')) continue;
      const base = join(this.packDir, name.slice(0, -4));
      const stem = name.slice(0, -4);
      if (
        ['.keep', '.promisor', '.mtimes', '.bitmap'].some((ext) => present.has(stem + ext)) ||
        !present.has(`${stem}.pack`) ||
        listed.has(stem)
      )
        continue;
      // A pack's name is its content's checksum, so what was read of it once holds for good.
      let known = this.sizes.get(base);
      if (!known) {
        try {
          const { size: bytes, mtimeMs: mtime } = statSync(`${base}.pack`);
          const count = bytes > ROLL_MAX_BYTES ? 0 : packIndexCount(`${base}.idx`);
          if (count === undefined) continue;
          this.sizes.set(base, (known = { bytes, count, mtime }));
        } catch {
          continue; // removed meanwhile (another process rolled it up)
        }
      }
      if (known.bytes <= ROLL_MAX_BYTES) candidates.push({ base, ...known });
    }
    const alone = all && candidates.some((p) => this.copied.has(p.base));
    if (candidates.length < (all ? 2 : trigger) && !alone) return undefined;
    // Oldest first: packs copied together keep the steps in the order they were written (git lays a
    // pack out its own way, newest first, as `git gc` does).
    const packs = (all ? candidates : geometricRoll(candidates)).sort((a, b) => a.mtime - b.mtime);
    return packs.length >= 2 || alone ? { packs } : undefined;
  }

  // Rolls `packs` into one: copied together here, or (`deltify`: past DELTIFY_BYTES, many loose
  // objects to take in, a run's end) by git (see the top of this file). Writes, fsyncs and removals
  // go to the thread pool.
  private async roll(packs: PackInfo[], loose: string[], deltify: boolean): Promise<RollupResult> {
    const looseThere = deltify ? loose.filter((oid) => existsSync(loosePath(this.objectsDir, oid))) : [];
    const dirs = new DirectorySync();
    const parts = deltify ? undefined : packs.map((p) => ({ pack: readFileSync(`${p.base}.pack`), idx: readFileSync(`${p.base}.idx`) }));
    const concatenated = parts && concatenatePacks(parts);
    let made: { pack: string; objects: number };
    if (concatenated) {
      made = { pack: await writePackFiles(this.packDir, concatenated, dirs), objects: concatenated.count };
      await dirs.flush();
    } else {
      made = await this.deltified(packs, looseThere, dirs);
    }
    // The index first, so no reader sees a pack it can no longer open.
    const removed = packs.map((p) => `${p.base}.pack`).filter((path) => path !== made.pack);
    await Promise.all(
      removed.map(async (path) => {
        await unlinkAsync(`${path.slice(0, -5)}.idx`);
        await unlinkAsync(`${path.slice(0, -5)}.rev`);
        await unlinkAsync(path);
      }),
    );
    await Promise.all(looseThere.map((oid) => unlinkAsync(loosePath(this.objectsDir, oid))));
    for (const oid of looseThere) this.loose.delete(oid);
    for (const path of removed) this.copied.delete(path.slice(0, -5));
    if (concatenated) this.copied.add(made.pack.slice(0, -5));
    const result = {
      packs: packs.length,
      loose: looseThere.length,
      objects: made.objects,
      pack: made.pack,
      removed,
      deltified: !concatenated,
    };
    this.onRolled?.(result);
    return result;
  }

  // The packs' objects and the loose ones deltified into one pack by `git pack-objects` in a work
  // directory of its own, checked to hold every one of them; the new pack is durable (files, then
  // names) before this returns.
  private async deltified(packs: PackInfo[], loose: string[], dirs: DirectorySync): Promise<{ pack: string; objects: number }> {
    const oids = new Set<string>(loose);
    for (const pack of packs) for (const oid of indexIds(readFileSync(`${pack.base}.idx`))) oids.add(oid);
    const work = mkdtempSync(join(this.objectsDir, `tmp_rollup_${process.pid}_`));
    try {
      const made = await withHistoryDeltas(
        work,
        await packObjects(
          join(this.objectsDir, '..'),
          this.objectsDir,
          work,
          packs.map((p) => p.base),
          loose,
        ),
      );
      const id = basename(made.pack).slice('pack-'.length, -'.pack'.length);
      const packed = new Set(indexIds(readFileSync(made.idx)));
      for (const oid of oids) if (!packed.has(oid)) throw new Error(`git pack-objects left ${oid} out`);
      await Promise.all([syncPathAsync(made.pack), syncPathAsync(made.idx)]);
      const pack = join(this.packDir, `pack-${id}.pack`);
      await rename(made.pack, pack);
      await rename(made.idx, join(this.packDir, `pack-${id}.idx`));
      dirs.add(this.packDir);
      await dirs.flush();
      return { pack, objects: packed.size };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}

// The pack git made in `work` (pack-<id>), or the same objects with the deltas git leaves out
// (history-deltas.ts) in a pack beside it, when that is smaller. Either is made durable by the caller.
async function withHistoryDeltas(work: string, id: string): Promise<{ pack: string; idx: string }> {
  const made = { pack: join(work, 'pack', `pack-${id}.pack`), idx: join(work, 'pack', `pack-${id}.idx`) };
  const smaller = await addHistoryDeltas(readFileSync(made.pack), readFileSync(made.idx));
  if (!smaller) return made;
  const rewritten = { pack: join(work, 'pack', `pack-${smaller.id}.pack`), idx: join(work, 'pack', `pack-${smaller.id}.idx`) };
  writeFileSync(rewritten.pack, smaller.pack, { mode: 0o444 });
  writeFileSync(rewritten.idx, smaller.idx, { mode: 0o444 });
  return rewritten;
}

// The packs to roll up so that the rest form a geometric progression (factor 2), as
// `git repack --geometric=2` picks them: sorted by object count, the largest pack that is not at
// least twice the one below it marks the split, and the split then climbs past every pack that
// is not at least twice all the objects below it.
function geometricRoll(packs: PackInfo[]): PackInfo[] {
  const sorted = [...packs].sort((a, b) => a.count - b.count);
  let split = sorted.length - 1;
  for (; split > 0; split--) if (sorted[split]!.count < 2 * sorted[split - 1]!.count) break;
  if (split === 0) return [];
  let total = 0;
  for (let i = 0; i < split; i++) total += sorted[i]!.count;
  while (split < sorted.length && sorted[split]!.count < 2 * total) total += sorted[split++]!.count;
  return sorted.slice(0, split);
}

// unlink that shrugs at a file already gone (another process rolled it up, or never had a .rev).
const unlinkAsync = (path: string): Promise<void> => unlink(path).catch(() => undefined);

// The object count of the version-2 pack index at `path`, from its header and fan-out table alone
// (a roll-up plan runs every few appends: reading whole indexes, a megabyte for a 10,000-step
// journal, would be waste); undefined when it is not one.
function packIndexCount(path: string): number | undefined {
  const head = Buffer.alloc(INDEX_IDS);
  const fd = openSync(path, 'r');
  try {
    if (readSync(fd, head, 0, head.length, 0) < head.length) return undefined;
  } finally {
    closeSync(fd);
  }
  return isIndexV2(head) ? indexCount(head) : undefined;
}

// The packs a multi-pack-index lists (their names without extension), from its PNAM chunk; or
// undefined when it cannot be read.
function multiPackIndexPacks(path: string): Set<string> | undefined {
  try {
    const midx = readFileSync(path);
    if (midx.toString('latin1', 0, 4) !== 'MIDX' || midx[4] !== 1) return undefined;
    const chunks = midx[6]!;
    for (let i = 0; i < chunks; i++) {
      const at = 12 + i * 12;
      if (midx.toString('latin1', at, at + 4) !== 'PNAM') continue;
      const start = Number(midx.readBigUInt64BE(at + 4));
      const end = Number(midx.readBigUInt64BE(at + 16));
      const names = midx.toString('latin1', start, end).split('\0').filter(Boolean);
      return new Set(names.map((name) => name.replace(/\.(idx|pack)$/, '')));
    }
    return undefined;
  } catch {
    return undefined;
  }
}
