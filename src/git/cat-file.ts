// Reading many objects at once through git itself: one `git cat-file --batch` process is given
// every id on its stdin and writes each object back (`<oid> <type> <size>\n<body>\n`, or
// `<oid> missing\n`). git's own reader (its C zlib, its delta-base cache, its pack windows) reads a
// long journal's thousands of entries several times faster than inflating them one by one in
// JavaScript: measured on a 3,001-step journal, 4,500 entries in about 65 ms of git's CPU against
// some 300 ms for the in-process pack reader (docs/benchmarks.md). The output is parsed as it
// streams, so the bodies are handed on one by one and never all held at once.
// Also here: the reader of last resort, for the single objects the object store's own readers
// decline (an old pack index, a partial clone's promisor): sized by git, read by isomorphic-git, and
// a partial clone's left-out object fetched by git.
import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { ObjectTooLargeError } from '../errors/index.js';
import { runSync, startProcess } from '../os/processes.js';
import { buildOwnGit } from './repository.js';
import { hashObject, type ObjectType } from './git-object.js';

/**
 * From this many objects on, ObjectStore.readEach reads them through one `git cat-file --batch` (here):
 * below it, starting git costs more than reading them in-process.
 */
export const GIT_BATCH_FROM = 200;

/** What git said of one id: its body (of the type asked for), or why it has none. */
export type BatchObject = { oid: string; body: Buffer } | { oid: string; body: undefined; why: 'missing' | 'wrong-type' };

/**
 * Reads `oids` from the repository whose git dir is `gitdir` through one `git cat-file --batch`,
 * calling `onObject` for each in order, as soon as it is read. Rejects when git cannot be run or
 * stops before it has answered every id (the caller then reads the objects another way). With
 * `maxBytes`, git is stopped at the header of a larger object, before its body comes: the caller's
 * own reader then refuses it from its header alone.
 */
export function catFileBatch(gitdir: string, oids: readonly string[], expected: ObjectType, onObject: (object: BatchObject, index: number) => void, maxBytes?: number): Promise<void> {
  // --buffer: every id is given at once, so git need not flush after each object (a write, and an
  // event here, per object).
  const git = buildOwnGit(['--git-dir', gitdir, 'cat-file', '--batch', '--buffer']);
  // The objects under these ids, not what a `refs/replace/` ref would put in their place.
  const { child } = startProcess('git', git.args, { env: { ...git.env, GIT_NO_REPLACE_OBJECTS: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise<void>((resolve, reject) => {
    let next = 0; // the index of the id git answers next
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let want: { oid: string; size: number; type: string } | undefined;
    let failed: Error | undefined;
    let stderr = '';
    const fail = (error: Error) => {
      failed ??= error;
      child.kill();
    };
    const take = (n: number): Buffer => {
      const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      pending = all.length > n ? [all.subarray(n)] : [];
      pendingBytes = all.length - n;
      return all.subarray(0, n);
    };
    const parse = () => {
      while (!failed && next < oids.length) {
        if (!want) {
          // The header line: find its newline in what has come so far.
          let at = -1;
          let seen = 0;
          for (const chunk of pending) {
            const i = chunk.indexOf(10);
            if (i >= 0) {
              at = seen + i;
              break;
            }
            seen += chunk.length;
          }
          if (at < 0) return;
          const header = take(at + 1).toString('latin1').slice(0, -1);
          const oid = oids[next]!;
          const parts = header.split(' ');
          if (parts[0] !== oid) return fail(new Error(`git cat-file answered "${header}" for ${oid}`));
          if (parts[1] === 'missing' && parts.length === 2) {
            onObject({ oid, body: undefined, why: 'missing' }, next++);
            continue;
          }
          const size = Number(parts[2]);
          if (parts.length !== 3 || !Number.isSafeInteger(size) || size < 0) return fail(new Error(`git cat-file answered "${header}" for ${oid}`));
          if (maxBytes !== undefined && size > maxBytes) return fail(new Error(`${oid} is ${size} bytes, over the ${maxBytes} asked for`));
          want = { oid, size, type: parts[1]! };
        }
        if (pendingBytes < want.size + 1) return;
        const body = take(want.size + 1);
        if (body[want.size] !== 10) return fail(new Error(`git cat-file's answer for ${want.oid} does not end where its size says`));
        const object: BatchObject = want.type === expected ? { oid: want.oid, body: body.subarray(0, want.size) } : { oid: want.oid, body: undefined, why: 'wrong-type' };
        want = undefined;
        try {
          onObject(object, next++);
        } catch (error) {
          fail(error as Error);
        }
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      parse();
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    child.stdin.on('error', () => {}); // git gone early: told by its exit below
    child.on('error', fail);
    child.on('close', (code) => {
      if (failed) return reject(failed);
      if (next < oids.length) return reject(new Error(`git cat-file --batch stopped (exit ${code}) after ${next} of ${oids.length} objects${stderr ? `: ${stderr.trim()}` : ''}`));
      resolve();
    });
    child.stdin.end(oids.map((oid) => `${oid}\n`).join(''));
  });
}

/**
 * Reads `oids` through catFileBatch, handing each body git gives (of type `expected`) to `onBody`
 * with its index; returns which were handed on (1 at their index). What git does not answer (no
 * git, a partial clone's missing object, another type) is left for the caller to read its own way.
 * An error thrown by `onBody` stops the reading and is thrown; git failing is not.
 */
export async function readEachThroughGit(gitdir: string, oids: readonly string[], expected: ObjectType, onBody: (body: Buffer, index: number) => void, maxBytes?: number): Promise<Uint8Array> {
  const done = new Uint8Array(oids.length);
  let thrown: { error: unknown } | undefined;
  try {
    await catFileBatch(gitdir, oids, expected, ({ body }, index) => {
      if (!body) return; // read by the caller, its own way, which says what is wrong with it
      try {
        onBody(body, index);
      } catch (error) {
        thrown = { error };
        throw error;
      }
      done[index] = 1;
    }, maxBytes);
  } catch (error) {
    if (thrown) throw thrown.error;
    // git could not be run, or stopped: what it did not hand on is read by the caller.
  }
  return done;
}

/**
 * The type and size of object `oid` as git tells them from its header (`git cat-file
 * --batch-check`), or undefined: for what savepoint's own readers cannot tell (an old pack index,
 * a partial clone's promisor). Hooks and fsmonitor off, as in every git savepoint runs.
 */
export function gitObjectSize(gitdir: string, oid: string): { type: string; size: number } | undefined {
  if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
  const result = runSync('git', ['--git-dir', gitdir, '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', 'cat-file', '--batch-check'], {
    input: `${oid}\n`,
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_NO_LAZY_FETCH: '1' },
  });
  const line = /^[0-9a-f]{40} (blob|tree|commit|tag) (\d+)$/m.exec(result.stdout?.toString('latin1') ?? '');
  return line ? { type: line[1]!, size: Number(line[2]) } : undefined;
}

/**
 * Reads an object the store's own readers declined (ObjectStore.read): with `maxBytes`, git sizes it
 * first and a larger one is refused (ObjectTooLargeError); isomorphic-git reads it (with `cache`, its
 * cache of pack indexes), else git fetches a partial clone's left-out object.
 */
export async function readDeclined(gitdir: string, oid: string, expected: ObjectType, maxBytes: number | undefined, cache: object): Promise<Buffer> {
  const sized = maxBytes === undefined ? undefined : gitObjectSize(gitdir, oid); // what our readers cannot read, git sizes
  if (sized && sized.size > maxBytes!) throw new ObjectTooLargeError(oid, sized.type, sized.size, maxBytes!);
  // isomorphic-git is loaded only when our own readers decline: it costs 0.1 s of start-up.
  const { default: git } = await import('isomorphic-git');
  let read: { type: string; object: unknown };
  try {
    read = await git.readObject({ fs: nodeFs, gitdir, oid, format: 'content', cache });
  } catch (error) {
    const fetched = (error as { code?: string }).code === 'NotFoundError' && isPartialClone(join(gitdir, 'objects')) ? readFromPromisor(gitdir, oid, expected) : undefined;
    if (fetched) return fetched;
    throw error;
  }
  if (read.type !== expected) throw new Error(`object ${oid} is a ${read.type}, expected a ${expected}`);
  return Buffer.from(read.object as Uint8Array);
}

// Whether objects may be missing on purpose: a partial clone (`--filter=blob:none`) marks the packs
// it fetched with a .promisor file, and git fetches what they left out when it is first read.
function isPartialClone(objectsDir: string): boolean {
  try {
    return nodeFs.readdirSync(join(objectsDir, 'pack')).some((name) => name.endsWith('.promisor'));
  } catch {
    return false;
  }
}

// An object a partial clone left out (a fetched journal's blobs, with blob:none), read through git,
// which fetches it from the promisor remote; checked against its id like any object. Hooks and
// fsmonitor are off: savepoint's own git commands run nothing a command could have planted.
function readFromPromisor(gitdir: string, oid: string, expected: ObjectType): Buffer | undefined {
  const result = runSync('git', ['--git-dir', gitdir, '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', 'cat-file', expected, oid], {
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1024 * 1024 * 1024,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  if (result.status !== 0 || !result.stdout) return undefined;
  return hashObject(expected, result.stdout) === oid ? result.stdout : undefined;
}
