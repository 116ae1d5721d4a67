// The floor under a durable journal commit: the file-system operations one append makes, and only
// those (no hashing, no compression, no git objects, no JavaScript work beyond the calls), so the
// bench can show how much of an append, and of a turn, the disk itself takes. One append writes a
// pack, its index and the ref lock's content (three files, fsynced together on the thread pool),
// renames the pack and index into objects/pack and fsyncs that directory, links the lock, appends
// the reflog line, renames the lock over the ref and fsyncs the ref's directory: three rounds of
// fsyncs one after another, which a portable durable commit cannot do in fewer (the objects' names
// must be on disk before a ref that names them is).
import { closeSync, fsync, linkSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTempDir, now, type BenchContext } from './lib.js';

const fsyncAsync = promisify(fsync);

async function syncDir(path: string): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

function createWith(path: string, bytes: Buffer): number {
  const fd = openSync(path, 'wx', 0o444);
  writeSync(fd, bytes);
  return fd;
}

/**
 * Latencies (ms) of `n` commits' file operations, each as an append makes them (sizes of a
 * run_bash entry's pack: ~1.6 KB pack, ~1.3 KB index, a 41-byte ref), in a fresh temp directory.
 */
export async function durableCommitFloor(context: Pick<BenchContext, 'keep' | 'log'>, n: number): Promise<number[]> {
  const temp = createTempDir(context, 'commit-floor');
  const objects = join(temp.dir, 'objects');
  const packDir = join(objects, 'pack');
  const refDir = join(temp.dir, 'refs', 'heads');
  mkdirSync(packDir, { recursive: true });
  mkdirSync(refDir, { recursive: true });
  const reflog = openSync(join(temp.dir, 'reflog'), 'a');
  const pack = Buffer.alloc(1600, 7);
  const idx = Buffer.alloc(1300, 9);
  const latencies: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = now();
      const ref = createWith(join(refDir, `.ref.lock-${i}`), Buffer.from(`${'0'.repeat(39)}${i % 10}\n`));
      const files = [createWith(join(objects, `tmp_pack_${i}`), pack), createWith(join(objects, `tmp_idx_${i}`), idx)];
      await Promise.all([ref, ...files].map((fd) => fsyncAsync(fd)));
      for (const fd of [ref, ...files]) closeSync(fd);
      renameSync(join(objects, `tmp_pack_${i}`), join(packDir, `pack-${i}.pack`));
      renameSync(join(objects, `tmp_idx_${i}`), join(packDir, `pack-${i}.idx`));
      await syncDir(packDir);
      linkSync(join(refDir, `.ref.lock-${i}`), join(refDir, 'ref.lock'));
      unlinkSync(join(refDir, `.ref.lock-${i}`));
      writeSync(reflog, `${'0'.repeat(40)} ${'1'.repeat(40)} savepoint <s@localhost> 1796132130 +0000\tstep ${i}\n`);
      renameSync(join(refDir, 'ref.lock'), join(refDir, 'ref'));
      await syncDir(refDir);
      latencies.push(now() - t0);
    }
  } finally {
    closeSync(reflog);
    temp.remove();
  }
  return latencies;
}
