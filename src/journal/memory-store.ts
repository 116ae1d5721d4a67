// The journal in memory: a JournalStorage whose objects are the same git objects the git store
// writes (blobs, trees and commits, hashed alike), held in a map, and whose branch is a field. No
// disk, no git, no process: the valve and the agent loop run on it in-process, in tests and in a
// library caller's own. Nothing is durable, and there is one writer (the process holding it).
import { MissingObjectError, ObjectTooLargeError, RunLockedError } from '../errors/index.js';
import { makeCommit, parseCommit, parseTree, type GitObject, type ObjectType, type Tree } from '../git/git-object.js';
import type { OrphanReport } from '../locks/live-commands.js';
import type { RunLock } from '../locks/run-lock.js';
import { buildTrees, fileAtPath, treeAtPath } from './branch-trees.js';
import type { JournalStorage, ObjectReader, RunLocal } from './journal-storage.js';
import { JOURNAL_REF } from './layout.js';
import { markAppended, type FaultPoint, type JournalFile, type StoreOptions } from './store-options.js';

/** Objects by id, in memory. */
export class MemoryObjects implements ObjectReader {
  private readonly objects = new Map<string, GitObject>();

  /** Keeps `objects` (an object already held is kept as it is: same id, same content). */
  add(objects: Iterable<GitObject>): void {
    for (const object of objects) if (!this.objects.has(object.oid)) this.objects.set(object.oid, object);
  }

  async read(oid: string, expected: ObjectType, maxBytes?: number): Promise<Buffer> {
    const object = this.objects.get(oid);
    if (!object) throw new MissingObjectError(oid, expected, 'memory');
    if (object.type !== expected) throw new Error(`object ${oid} is a ${object.type}, expected a ${expected}`);
    if (maxBytes !== undefined && object.body.length > maxBytes)
      throw new ObjectTooLargeError(oid, object.type, object.body.length, maxBytes);
    return object.body;
  }

  async readTree(oid: string): Promise<Tree> {
    return parseTree(await this.read(oid, 'tree'));
  }
}

/** A run's local side in memory: a lock per run within this store, commands and kept trees noted. */
export class MemoryRunLocal implements RunLocal {
  readonly worktree: string;
  /** The run locks held, and the process groups each run's steps noted as running. */
  readonly locks = new Set<string>();
  readonly commands = new Map<string, Set<number>>();
  /** The tree each run keeps from gc (nothing is collected in memory: noted for tests). */
  readonly keptTrees = new Map<string, string>();
  private readonly head: { commit?: string; branch: string | null };

  constructor(options: { worktree?: string; headCommit?: string; headBranch?: string | null } = {}) {
    this.worktree = options.worktree ?? '/memory';
    this.head = {
      ...(options.headCommit ? { commit: options.headCommit } : {}),
      branch: options.headBranch === undefined ? 'main' : options.headBranch,
    };
  }

  headCommit(): string | undefined {
    return this.head.commit;
  }

  headBranch(): string | null {
    return this.head.branch;
  }

  assertWritable(): void {}

  lock(run: string): RunLock {
    const path = `memory:${run}.lock`;
    if (this.locks.has(run)) throw new RunLockedError(run, { pid: process.pid, host: 'memory', since: new Date().toISOString() }, path);
    this.locks.add(run);
    return { path, check: () => {}, onLost: () => {}, release: () => void this.locks.delete(run) };
  }

  async stopOrphans(): Promise<OrphanReport[]> {
    return [];
  }

  trackCommand(run: string, pgid: number): void {
    let groups = this.commands.get(run);
    if (!groups) this.commands.set(run, (groups = new Set()));
    groups.add(pgid);
  }

  untrackCommand(run: string, pgid: number): void {
    this.commands.get(run)?.delete(pgid);
  }

  async keepTree(run: string, tree: string): Promise<void> {
    this.keptTrees.set(run, tree);
  }

  async releaseTree(run: string): Promise<void> {
    this.keptTrees.delete(run);
  }
}

/** The journal branch in memory (see the top of this file). */
export class MemoryJournalStore implements JournalStorage {
  readonly objects = new MemoryObjects();
  readonly local: MemoryRunLocal;
  readonly ref = JOURNAL_REF;
  private tipCommit: string | undefined;
  private rootTree: string | undefined;
  private options: StoreOptions;
  private appending: Promise<unknown> = Promise.resolve();
  private readonly trees = { tree: (oid: string) => this.objects.readTree(oid) };

  /** `options`: the hooks and `faultPoint` as a JournalStore takes them; `local` as MemoryRunLocal's. */
  constructor(options: StoreOptions & { local?: ConstructorParameters<typeof MemoryRunLocal>[0] } = {}) {
    const { local, ...rest } = options;
    this.options = rest;
    this.local = new MemoryRunLocal(local);
  }

  get tip(): string | undefined {
    return this.tipCommit;
  }

  /** Nothing else moves this branch. */
  async refresh(): Promise<boolean> {
    return false;
  }

  treeAt(path: string): Promise<Tree | undefined> {
    return treeAtPath(this.trees, this.rootTree, path);
  }

  async fileAt(path: string, maxBytes?: number): Promise<Buffer | undefined> {
    const oid = await fileAtPath(this.trees, this.rootTree, path);
    return oid ? this.objects.read(oid, 'blob', maxBytes) : undefined;
  }

  /** The commits on the branch, newest first (first parents): what `git log` would list. */
  async log(): Promise<Array<{ oid: string; message: string }>> {
    const commits: Array<{ oid: string; message: string }> = [];
    for (let oid = this.tipCommit; oid;) {
      const commit = parseCommit(oid, await this.objects.read(oid, 'commit'));
      commits.push({ oid, message: commit.message });
      oid = commit.parents[0];
    }
    return commits;
  }

  append(files: JournalFile[], message: string, owns?: () => void, fence?: string): Promise<string> {
    const turn = this.appending.then(() => this.appendNow(files, message, owns, fence));
    this.appending = turn.catch(() => undefined);
    return turn;
  }

  private async appendNow(files: JournalFile[], message: string, owns?: () => void, fence?: string): Promise<string> {
    const fault: (name: FaultPoint) => void = this.options.faultPoint ?? (() => {});
    owns?.();
    const objects: GitObject[] = [];
    const root = await buildTrees(this.trees, this.rootTree, files, objects, this.ref);
    const commit = makeCommit({ tree: root, parents: this.tipCommit ? [this.tipCommit] : [], message });
    fault('before-objects');
    this.objects.add([...objects, commit]);
    fault('after-objects');
    this.tipCommit = commit.oid;
    this.rootTree = root;
    try {
      await this.options.afterAppend?.(commit.oid, fence === undefined ? { fence: false } : { fence: true, what: fence });
    } catch (error) {
      markAppended(error, commit.oid);
      throw error;
    }
    return commit.oid;
  }

  async settle(what: string): Promise<void> {
    await this.options.beforeFence?.(what);
  }

  hook(hooks: Pick<StoreOptions, 'afterAppend' | 'beforeFence' | 'onRestored'>): void {
    this.options = { ...this.options, ...hooks };
  }
}
