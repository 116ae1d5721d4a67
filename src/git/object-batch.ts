// Storing many new objects at once (the first checkpoint of a working tree with thousands of files
// git does not have, such as an unignored node_modules) as one pack, two files and two fsyncs,
// instead of a loose file each (docs/architecture.md has the numbers). It is on disk (temp file,
// fsync, rename, directory fsync) before any tree naming its objects is handed out. Objects git
// already has, loose or packed, are left out, so a later run over the same files adds nothing. Few
// objects still go loose (ObjectStore.write) or with the next append (ObjectStore.hold).
// Tested in test/worktree/big-trees.test.ts.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loosePath, type GitObject } from './git-object.js';
import type { ObjectStore } from './object-store.js';
import { DirectorySync } from '../os/durable-file.js';
import { PackBuilder, writePackFilesSync } from './pack-file.js';

/** From this many new objects in one checkpoint on, they are written as one pack. */
export const PACK_THRESHOLD = 256;

/** Collects the new objects of one checkpoint and stores them: loose when few, else as one pack. */
export class ObjectBatch {
  private readonly store: ObjectStore;
  private readonly hold: boolean;
  private loose: GitObject[] = [];
  private pack: PackBuilder | undefined;
  private presence: ObjectPresence | undefined;

  /** With `hold`, the few loose objects are handed to the store to go with its next append (ObjectStore.hold). */
  constructor(store: ObjectStore, options: { hold?: boolean } = {}) {
    this.store = store;
    this.hold = options.hold ?? false;
  }

  /**
   * Adds an object to store. Past PACK_THRESHOLD objects, the ones git already has are dropped, and
   * once PACK_THRESHOLD really new ones are held they go into a pack (bodies dropped as they come).
   */
  push(object: GitObject): void {
    if (this.presence?.has(object.oid)) return;
    if (this.pack) return this.pack.add(object);
    this.loose.push(object);
    if (this.loose.length < PACK_THRESHOLD) return;
    if (!this.presence) {
      this.presence = new ObjectPresence(this.store);
      this.loose = this.loose.filter((held) => !this.presence!.has(held.oid));
      if (this.loose.length < PACK_THRESHOLD) return;
    }
    this.pack = new PackBuilder();
    for (const held of this.loose) this.pack.add(held);
    this.loose = [];
  }

  /**
   * Writes everything added, durably (with `hold` and no pack, the store holds the few objects for
   * its next append); returns how many objects went into a new pack (0: none).
   */
  flush(): number {
    const packed = this.pack?.count ?? 0;
    if (packed > 0) {
      // Its files, then the pack directory, durable before any tree naming its objects is handed out.
      const dirs = new DirectorySync();
      writePackFilesSync(join(this.store.gitdir, 'objects', 'pack'), this.pack!.build(), dirs);
      dirs.flushSync();
    }
    if (this.hold && packed === 0) this.store.hold(this.loose);
    else this.store.write(this.loose);
    this.loose = [];
    this.pack = undefined;
    return packed;
  }
}

// Whether git already has an object: a non-empty loose file, or an entry in a pack's index.
class ObjectPresence {
  private readonly objectsDir: string;
  private readonly store: ObjectStore;
  private readonly loose = new Map<string, Set<string>>();
  // The packs there are now are looked for once, at the first question.
  private scanned = false;

  constructor(store: ObjectStore) {
    this.store = store;
    this.objectsDir = join(store.gitdir, 'objects');
  }

  has(oid: string): boolean {
    if (this.looseNames(oid.slice(0, 2)).has(oid.slice(2))) {
      // A torn (empty) loose file left by a crash does not count: the object is written again.
      const stat = statSync(loosePath(this.objectsDir, oid), { throwIfNoEntry: false });
      if (stat && stat.size > 0) return true;
    }
    const rescan = !this.scanned;
    this.scanned = true;
    return this.store.isPacked(oid, rescan);
  }

  // The loose objects of one fan-out directory, listed once (one readdir, not a stat per object).
  private looseNames(prefix: string): Set<string> {
    let names = this.loose.get(prefix);
    if (!names) {
      try {
        names = new Set(readdirSync(join(this.objectsDir, prefix)));
      } catch {
        names = new Set();
      }
      this.loose.set(prefix, names);
    }
    return names;
  }
}
