// Git objects: building blobs, trees and commits, and storing them crash-safely. We serialise and
// hash them ourselves (the formats are tiny) so that every object of an append is known before any
// is written, and each is written whole: isomorphic-git writes objects in place without fsync and
// never rewrites a torn one. Reading goes through isomorphic-git, which also understands packs.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as nodeFs from 'node:fs';
import { dirname, join } from 'node:path';
import { inflateSync, deflateSync, constants as zlib } from 'node:zlib';
import git from 'isomorphic-git';
import { writeFileDurably } from './durable-file.js';

export type ObjectType = 'blob' | 'tree' | 'commit';

// One object ready to store: its id and its uncompressed body (without the git header).
export interface GitObject {
  oid: string;
  type: ObjectType;
  body: Buffer;
}

// A tree entry; `mode` is git's octal string: 100644 file, 100755 executable, 120000 link, 40000 tree.
export interface TreeEntry {
  mode: string;
  oid: string;
}

export type Tree = Map<string, TreeEntry>;

export const TREE_MODE = '40000';

let tempCounter = 0;
export const FILE_MODE = '100644';

// Hashes `body` as a git object of `type`.
export function makeObject(type: ObjectType, body: Buffer): GitObject {
  const hash = createHash('sha1');
  hash.update(`${type} ${body.length}\0`);
  hash.update(body);
  return { oid: hash.digest('hex'), type, body };
}

// Serialises a tree in git's canonical order (a subtree sorts as if its name ended in '/').
export function makeTree(entries: Tree): GitObject {
  const sortKey = (name: string, entry: TreeEntry) => (entry.mode === TREE_MODE ? `${name}/` : name);
  const names = [...entries.keys()].sort((a, b) => {
    const ka = sortKey(a, entries.get(a)!);
    const kb = sortKey(b, entries.get(b)!);
    return Buffer.compare(Buffer.from(ka), Buffer.from(kb));
  });
  const parts: Buffer[] = [];
  for (const name of names) {
    const entry = entries.get(name)!;
    parts.push(Buffer.from(`${entry.mode} ${name}\0`), Buffer.from(entry.oid, 'hex'));
  }
  return makeObject('tree', Buffer.concat(parts));
}

export interface CommitFields {
  tree: string;
  parents: string[];
  message: string;
  timestamp?: Date;
}

// The identity on journal commits: the journal is written by savepoint, not by the user.
const IDENTITY = 'savepoint <savepoint@localhost>';

export function makeCommit({ tree, parents, message, timestamp = new Date() }: CommitFields): GitObject {
  const when = `${Math.floor(timestamp.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${IDENTITY} ${when}`, `committer ${IDENTITY} ${when}`];
  const text = `${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`;
  return makeObject('commit', Buffer.from(text, 'utf8'));
}

// The object database of one repository (its common git dir), with one read cache for the process.
export class ObjectStore {
  readonly gitdir: string;
  // isomorphic-git's cache: without it every packed read re-loads the pack index.
  private readonly cache: object = {};

  constructor(gitdir: string) {
    this.gitdir = gitdir;
  }

  private pathOf(oid: string): string {
    return join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  // Stores objects durably; ones already present as non-empty loose files are skipped. A torn
  // (empty) file left by some other writer's crash is replaced, since rename overwrites it.
  write(objects: Iterable<GitObject>): void {
    for (const object of objects) {
      const path = this.pathOf(object.oid);
      if (existsSync(path) && statSync(path).size > 0) continue;
      const raw = Buffer.concat([Buffer.from(`${object.type} ${object.body.length}\0`), object.body]);
      // The temporary file is named the way git names its own (`tmp_obj_*`): one left by a kill -9
      // is then ignored by `git fsck` (any other name is reported as "bad sha1 file" for ever) and
      // removed by `git gc`/`git prune` like git's own leftovers.
      const temp = join(dirname(path), `tmp_obj_${process.pid}_${tempCounter++}`);
      writeFileDurably(path, deflateSync(raw, { level: zlib.Z_BEST_SPEED }), 0o444, temp);
    }
  }

  // Reads an object's body. Loose objects are read directly (fast); packed ones via isomorphic-git.
  async read(oid: string, expected: ObjectType): Promise<Buffer> {
    let raw: Buffer | undefined;
    try {
      raw = inflateSync(readFileSync(this.pathOf(oid)));
    } catch {
      raw = undefined;
    }
    if (raw) {
      const nul = raw.indexOf(0);
      const type = raw.subarray(0, raw.indexOf(32)).toString();
      if (type !== expected) throw new Error(`object ${oid} is a ${type}, expected a ${expected}`);
      return raw.subarray(nul + 1);
    }
    const { type, object } = await git.readObject({ fs: nodeFs, gitdir: this.gitdir, oid, format: 'content', cache: this.cache });
    if (type !== expected) throw new Error(`object ${oid} is a ${type}, expected a ${expected}`);
    return Buffer.from(object as Uint8Array);
  }

  async readTree(oid: string): Promise<Tree> {
    return parseTree(await this.read(oid, 'tree'));
  }

  // The tree a commit points at, and its parents.
  async readCommit(oid: string): Promise<{ tree: string; parents: string[]; message: string }> {
    const text = (await this.read(oid, 'commit')).toString('utf8');
    const headerEnd = text.indexOf('\n\n');
    const header = text.slice(0, headerEnd === -1 ? text.length : headerEnd);
    const tree = /^tree ([0-9a-f]{40})$/m.exec(header)?.[1];
    if (!tree) throw new Error(`commit ${oid} has no tree`);
    const parents = [...header.matchAll(/^parent ([0-9a-f]{40})$/gm)].map((m) => m[1]!);
    return { tree, parents, message: headerEnd === -1 ? '' : text.slice(headerEnd + 2) };
  }
}

export function parseTree(body: Buffer): Tree {
  const entries: Tree = new Map();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(32, at);
    const nul = body.indexOf(0, space);
    const mode = body.subarray(at, space).toString();
    const name = body.subarray(space + 1, nul).toString('utf8');
    const oid = body.subarray(nul + 1, nul + 21).toString('hex');
    entries.set(name, { mode: mode === '040000' ? TREE_MODE : mode, oid });
    at = nul + 21;
  }
  return entries;
}
