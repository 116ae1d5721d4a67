// The read path bench/read-paths.ts measures against the pack reader (written as it would ship:
// the checks, the process through src/os/processes.ts), kept in bench/ since the pack reader stays
// (docs/architecture.md, "Storage"). One long-lived `git cat-file --batch` of a repository: an object read is its id written on one
// line and git's answer (`<id> <type> <size>\n<body>\n`, or `<id> missing\n`) parsed as it streams
// in. Reads are answered in the order they were asked, so many can be asked before the first answer
// (pipelined): a caller that knows many ids asks for them all, then awaits them.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { MissingObjectError, ObjectTooLargeError } from '../src/errors/index.js';
import { startProcess, type ProcessHandle } from '../src/os/processes.js';
import type { ObjectType } from '../src/git/git-object.js';

interface Request {
  oid: string;
  expected: ObjectType;
  maxBytes: number | undefined;
  resolve(body: Buffer): void;
  reject(error: Error): void;
}

const OID = /^[0-9a-f]{40}$/;
// --no-replace-objects: the object asked for, never a replacement a repository's refs/replace names.
const batchArgs = (gitdir: string) => ['--no-replace-objects', '--git-dir', gitdir, 'cat-file', '--batch'];

/**
 * git's own object reader, started on the first read and kept until `close`. Each answer's type and
 * size are checked as the in-process reader checked them: an object of another type is an Error, one
 * larger than `maxBytes` ObjectTooLargeError (its body skipped as it streams, never held), one git
 * does not have MissingObjectError.
 */
export class CatFile {
  private readonly gitdir: string;
  private handle: ProcessHandle<ChildProcessWithoutNullStreams> | undefined;
  private readonly waiting: Request[] = [];
  // The answer being parsed: its header's bytes so far, then its body.
  private head: Buffer = Buffer.alloc(0);
  private body: Buffer | undefined;
  private size = -1;
  private got = 0;

  constructor(gitdir: string) {
    this.gitdir = gitdir;
  }

  /** git's process id while it runs (the bench reads its CPU time). */
  get pid(): number | undefined {
    return this.handle?.pid;
  }

  /** Object `oid`'s body, checked to be an `expected` of at most `maxBytes` bytes. */
  read(oid: string, expected: ObjectType, maxBytes?: number): Promise<Buffer> {
    // An id that is not one would break the line protocol (a newline in it): it is missing, unasked.
    if (!OID.test(oid)) return Promise.reject(new MissingObjectError(oid, expected, this.gitdir));
    return new Promise((resolve, reject) => {
      const handle = this.started();
      // git keeps this process alive only while a read waits on it: an idle reader never does.
      if (this.waiting.length === 0) handle.keepAlive(true);
      this.waiting.push({ oid, expected, maxBytes, resolve, reject });
      handle.child.stdin.write(`${oid}\n`);
    });
  }

  /** Ends git's process; reads asked and not answered yet never settle, so close only an idle reader. */
  close(): void {
    const handle = this.handle;
    this.handle = undefined;
    if (!handle) return;
    handle.child.stdin.end();
    handle.kill();
  }

  private started(): ProcessHandle<ChildProcessWithoutNullStreams> {
    if (this.handle) return this.handle;
    const handle = startProcess('git', batchArgs(this.gitdir), {
      stdio: ['pipe', 'pipe', 'pipe'],
      keepAlive: false,
    });
    this.handle = handle;
    let stderr = '';
    handle.child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    handle.child.stdout.on('data', (chunk: Buffer) => this.take(chunk));
    handle.child.stdin.on('error', () => {}); // an early exit: reported by 'closed' below
    void handle.closed.then((end) => {
      if (this.handle !== handle) return; // closed here, on purpose
      const why = end.error?.message ?? (stderr.trim() || `it ended (${end.signal ?? end.code})`);
      this.fail(new Error(`git cat-file --batch could not read ${this.gitdir}: ${why}`));
    });
    return handle;
  }

  // Parses what git wrote: headers and bodies, answering the reads in order.
  private take(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.size < 0) {
        const nl = chunk.indexOf(10, at);
        if (nl < 0) {
          this.head = Buffer.concat([this.head, chunk.subarray(at)]);
          return;
        }
        const line = (this.head.length ? Buffer.concat([this.head, chunk.subarray(at, nl)]) : chunk.subarray(at, nl)).toString('latin1');
        this.head = Buffer.alloc(0);
        at = nl + 1;
        this.header(line);
        continue;
      }
      // A body, then its newline.
      const take = Math.min(this.size + 1 - this.got, chunk.length - at);
      if (this.body) chunk.copy(this.body, this.got, at, at + Math.min(take, this.size - this.got));
      this.got += take;
      at += take;
      if (this.got === this.size + 1) this.answer();
    }
  }

  private header(line: string): void {
    const request = this.waiting[0];
    const [oid, type, sizeText] = line.split(' ');
    if (!request || oid !== request.oid) return this.fail(new Error(`git cat-file --batch answered out of order: ${line}`));
    if (sizeText === undefined) {
      this.waiting.shift();
      if (this.waiting.length === 0) this.handle?.keepAlive(false);
      request.reject(new MissingObjectError(request.oid, request.expected, this.gitdir));
      return;
    }
    this.size = Number(sizeText);
    this.got = 0;
    if (type !== request.expected) {
      this.body = undefined;
      request.reject(new Error(`object ${oid} is a ${type}, expected a ${request.expected}`));
    } else if (request.maxBytes !== undefined && this.size > request.maxBytes) {
      this.body = undefined; // skipped as it streams
      request.reject(new ObjectTooLargeError(oid, request.expected, this.size, request.maxBytes));
    } else this.body = Buffer.allocUnsafe(this.size);
  }

  private answer(): void {
    const request = this.waiting.shift()!;
    if (this.waiting.length === 0) this.handle?.keepAlive(false);
    const body = this.body;
    this.body = undefined;
    this.size = -1;
    if (body) request.resolve(body); // a refused one was rejected at its header
  }

  // Every read asked and not answered fails; the next read starts git again.
  private fail(error: Error): void {
    this.close();
    this.head = Buffer.alloc(0);
    this.body = undefined;
    this.size = -1;
    for (const request of this.waiting.splice(0)) request.reject(error);
  }
}
