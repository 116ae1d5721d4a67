// The git store under the journal: reads trees and files at the tip of `agent-journal`, and appends
// commits to it crash-safely. An append writes every new object whole (temp file, fsync, rename),
// then moves the branch by compare-and-swap under git's own ref lock; the loser of a race rebuilds
// its commit on the new tip and tries again, so concurrent appends of different runs never lose
// each other's entries. Never touches HEAD, the index or the working tree.
import { dirname, join } from 'node:path';
import { asWriteFailure, JournalMovedError } from '../errors/index.js';
import { unlinkQuietly } from '../os/durable-file.js';
import { assertNotCheckedOut, findRepository, type Repository } from '../git/repository.js';
import { makeCommit, type GitObject, type Tree } from '../git/git-object.js';
import { ObjectStore } from '../git/object-store.js';
import { compareAndSwapRef, prepareRefUpdate, readRef, type PreparedRef } from '../git/refs.js';
import { Reflog } from '../git/reflog.js';
import { JOURNAL_REF } from './layout.js';
import { markAppended, type AppendInfo, type JournalFile, type StoreOptions } from './store-options.js';
import { removeStaleTemps } from '../git/leftovers.js';
import { GitRunLocal } from './git-run-local.js';
import { buildTrees, fileAtPath, treeAtPath } from './branch-trees.js';
import type { JournalStorage } from './journal-storage.js';
export { appendedCommitOf, type AppendInfo, type FaultPoint, type JournalFile, type StoreOptions } from './store-options.js';

/** The `agent-journal` branch of one repository: the git JournalStorage. */
export class JournalStore implements JournalStorage {
  readonly ref: string;
  /** This machine's side of a run in this repository (its lock, its commands, HEAD). */
  readonly local: GitRunLocal;
  // The tip as last read or written, and its root tree id: appends build on it.
  private tipCommit: string | undefined;
  private rootTree: string | undefined;
  // Trees by id (immutable, so never stale); superseded ones are evicted to keep memory flat.
  private readonly trees = new Map<string, Tree>();
  // The append under way in this process, if any: the next one waits for it (append).
  private appending: Promise<unknown> = Promise.resolve();

  // The branch's reflog is the store's (one per run, shared with forRef's), not the process's.
  private constructor(
    readonly repo: Repository,
    readonly objects: ObjectStore,
    private options: StoreOptions,
    private readonly reflog = new Reflog(repo.commonDir),
  ) {
    this.ref = options.ref ?? JOURNAL_REF;
    this.local = new GitRunLocal(repo);
  }

  /**
   * Opens the journal of the repository around `dir` (throws NotARepositoryError and friends), or
   * of the repository the caller found already, removing the stale temp files killed writers left
   * (leftovers.ts).
   */
  static async open(dir: string | Repository, options: StoreOptions = {}): Promise<JournalStore> {
    const repo = typeof dir === 'string' ? findRepository(dir) : dir;
    removeStaleTemps(repo.commonDir, dirname(join(repo.commonDir, JOURNAL_REF)));
    const store = new JournalStore(repo, new ObjectStore(repo.commonDir), options);
    await store.refresh();
    return store;
  }

  /**
   * Another journal ref of the same repository (a remote-tracking copy), sharing this store's
   * repository and object store: nothing is found or opened again.
   */
  async forRef(ref: string): Promise<JournalStore> {
    const store = new JournalStore(
      this.repo,
      this.objects,
      { ...this.options, ref, afterAppend: undefined, beforeFence: undefined, onRestored: undefined },
      this.reflog,
    );
    await store.refresh();
    return store;
  }

  /**
   * Sets what a run adds to the store it was opened with: the hook after each append (`--push`)
   * and the one told when an append put a moved branch back. A session opens the store once to
   * find its run, then hands it to the run with these.
   */
  hook(hooks: Pick<StoreOptions, 'afterAppend' | 'beforeFence' | 'onRestored'>): void {
    this.options = { ...this.options, ...hooks };
  }

  get tip(): string | undefined {
    return this.tipCommit;
  }

  /** Re-reads the branch tip; true when it moved since we last looked. */
  async refresh(): Promise<boolean> {
    const tip = readRef(this.repo.commonDir, this.ref);
    if (tip === this.tipCommit) return false;
    this.tipCommit = tip;
    this.rootTree = tip ? (await this.objects.readCommit(tip)).tree : undefined;
    return true;
  }

  /** The tree at `path` ('' for the root) at the tip, or undefined when there is none. */
  treeAt(path: string): Promise<Tree | undefined> {
    return treeAtPath(this.treeSource, this.rootTree, path);
  }

  /** The bytes of the file at `path` at the tip, or undefined; one over `maxBytes` is refused unread (ObjectTooLargeError). */
  async fileAt(path: string, maxBytes?: number): Promise<Buffer | undefined> {
    const oid = await fileAtPath(this.treeSource, this.rootTree, path);
    return oid ? this.objects.read(oid, 'blob', maxBytes) : undefined;
  }

  // The trees an append builds on, read through the cache; superseded ones are evicted.
  private readonly treeSource = {
    tree: (oid: string) => this.tree(oid),
    made: (oid: string, entries: Tree, replaced: string | undefined) => {
      if (replaced && replaced !== oid) this.trees.delete(replaced);
      this.trees.set(oid, entries);
    },
  };

  async tree(oid: string): Promise<Tree> {
    let tree = this.trees.get(oid);
    if (!tree) {
      tree = await this.objects.readTree(oid);
      this.trees.set(oid, tree);
    }
    return tree;
  }

  /**
   * Adds `files` to the branch in one commit with `message`; returns the new commit id. `owns`, when
   * given, is asked before every attempt, the first and each one after losing the race to another
   * append: a process paused past its lease finds out there, before it builds on a tip that a new
   * owner of its run wrote, and stops (it throws). `fence` names the one-shot effect this append is
   * the intent of (afterAppend then waits for it to be pushed).
   */
  async append(files: JournalFile[], message: string, owns?: () => void, fence?: string): Promise<string> {
    // One append at a time from this process (the steps of one answer's reads finish together):
    // each builds on the tip the one before it wrote, instead of losing the race for the branch to
    // its own sibling and building again. Another process's appends race through the ref's lock.
    const turn = this.appending.then(() => this.appendNow(files, message, owns, fence));
    this.appending = turn.catch(() => undefined);
    return turn;
  }

  private async appendNow(files: JournalFile[], message: string, owns?: () => void, fence?: string): Promise<string> {
    const fault = this.options.faultPoint ?? (() => {});
    assertNotCheckedOut(this.repo, this.ref); // as git refuses to move a branch checked out elsewhere
    for (;;) {
      owns?.();
      const parent = this.tipCommit;
      const objects: GitObject[] = [];
      const root = await buildTrees(this.treeSource, this.rootTree, files, objects, this.ref);
      const commit = makeCommit({ tree: root, parents: parent ? [parent] : [], message });
      fault('before-objects');
      // The lock's content is written alongside the objects (their fsyncs overlap); the lock is
      // taken only once all of them are on disk.
      const preparing = prepareRefUpdate(this.repo.commonDir, this.ref, commit.oid);
      let prepared: PreparedRef;
      try {
        [, prepared] = await Promise.all([this.objects.writePacked([...objects, commit]), preparing]);
        fault('after-objects');
      } catch (error) {
        const unused = await preparing.catch(() => undefined); // the lock content, if it was written
        if (unused) unlinkQuietly(unused.path);
        throw error;
      }
      const moved = await compareAndSwapRef(this.repo.commonDir, this.ref, parent, commit.oid, {
        prepared,
        faultPoint: fault,
        staleMs: this.options.staleLockMs,
        isAncestor: (oid, tip) => this.isAncestor(oid, tip),
        reflog: { log: this.reflog, message: `savepoint: ${message.split('\n')[0]}`, onTip: true }, // `commit`'s parent is `parent`
      }).catch((error: unknown) => {
        throw asWriteFailure(error, join(this.repo.commonDir, this.ref)); // no room for the lock file
      });
      if (moved) {
        this.tipCommit = commit.oid;
        this.rootTree = root;
        this.objects.rollup.afterAppend();
        await this.afterAppend(commit.oid, fence === undefined ? { fence: false } : { fence: true, what: fence });
        return commit.oid;
      }
      await this.followTip(parent); // another process appended first: rebuild on its tip
    }
  }

  // The branch is no longer at `known`, the tip this process last read or wrote. Another append on
  // top of it is the everyday case: build on the new tip. But a tip that does not contain `known`
  // means the branch was deleted or reset under a live run (`git branch -D`, `git reset`), and
  // building on it would leave this run with holes ("step n is missing"). Deleted, or moved back to
  // an ancestor of `known`: the branch is put back at `known` (logged in the reflog; the appends it
  // had lost are then on it again). Moved onto other history: stop, appending nothing.
  private async followTip(known: string | undefined): Promise<void> {
    const found = readRef(this.repo.commonDir, this.ref);
    if (known === undefined || found === known || (found !== undefined && (await this.contains(found, known)))) {
      await this.refresh();
      return;
    }
    if (found !== undefined && !(await this.contains(known, found))) throw new JournalMovedError(this.ref, known, found);
    if (!(await this.hasCommit(known))) throw new JournalMovedError(this.ref, known, found, true);
    await compareAndSwapRef(this.repo.commonDir, this.ref, found, known, {
      staleMs: this.options.staleLockMs,
      reflog: {
        log: this.reflog,
        message: `savepoint: put back at the journal of a live run (the branch was ${found ? 'moved back' : 'deleted'} under it)`,
      },
    });
    this.options.onRestored?.({ restored: known, found });
    await this.refresh(); // whether our swap or someone else's won, the next round checks again
  }

  // Whether commit `oid` is `tip` or any ancestor of it (all parents: merges of fetched journals).
  private async contains(tip: string, oid: string, limit = 100_000): Promise<boolean> {
    const queue = [tip];
    const seen = new Set<string>();
    while (queue.length && seen.size < limit) {
      const current = queue.pop()!;
      if (current === oid) return true;
      if (seen.has(current)) continue;
      seen.add(current);
      try {
        queue.push(...(await this.objects.readCommit(current)).parents);
      } catch {
        // a commit this clone lacks (shallow, pruned): that line of history ends here
      }
    }
    return false;
  }

  private async hasCommit(oid: string): Promise<boolean> {
    try {
      await this.objects.readCommit(oid);
      return true;
    } catch {
      return false;
    }
  }

  // The push hook, run once the branch has moved: what it throws is marked as thrown after the
  // append landed (appendedCommitOf), so a caller does not take the entries for unwritten.
  private async afterAppend(commit: string, append: AppendInfo): Promise<void> {
    try {
      await this.options.afterAppend?.(commit, append);
    } catch (error) {
      markAppended(error, commit);
      throw error;
    }
  }

  /**
   * Waits, before the intent of the one-shot effect `what` is appended, until every earlier append
   * reached where afterAppend sends it (`--push`); throws when it cannot, and nothing is appended.
   */
  async settle(what: string): Promise<void> {
    await this.options.beforeFence?.(what);
  }

  /**
   * Moves the branch from the tip this store last saw to `next`, a commit already in the object
   * store (a fast-forward to a fetched journal, or a merge commit). False if the tip moved meanwhile.
   * `from` is the tip the caller built `next` on (default: the tip as last seen): an append of this
   * same store while the caller worked (a background push folding a fetched journal in) is then
   * never dropped, the swap fails instead.
   */
  async moveTip(
    next: string,
    reflog = 'savepoint: integrate a fetched journal',
    from: string | undefined = this.tipCommit,
  ): Promise<boolean> {
    assertNotCheckedOut(this.repo, this.ref);
    await this.objects.syncNames(); // a merge commit stored with write(): its names first
    const moved = await compareAndSwapRef(this.repo.commonDir, this.ref, from, next, {
      staleMs: this.options.staleLockMs,
      reflog: { log: this.reflog, message: reflog },
      isAncestor: (oid, tip) => this.isAncestor(oid, tip),
    });
    await this.refresh();
    return moved;
  }

  /**
   * Whether `oid` is `tip` or one of its first-parent ancestors. Only the first parents are walked:
   * the journal is not a straight line (sync writes merge commits, the local tip first and the
   * fetched journal second), but a commit this machine appended stays on the first-parent chain of
   * every later local tip, which is what compareAndSwapRef asks about.
   */
  async isAncestor(oid: string, tip: string, limit = 10_000): Promise<boolean> {
    let current: string | undefined = tip;
    for (let i = 0; current && i < limit; i++) {
      if (current === oid) return true;
      // A parent this clone lacks (a shallow journal's first commit): that line of history ends here.
      const parents: string[] = (await this.objects.readCommit(current).catch(() => undefined))?.parents ?? [];
      current = parents[0];
    }
    return false;
  }
}
