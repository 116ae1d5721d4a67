// Real file systems on a loop device, for the power-cut and full-disk tests: an image file formatted
// ext4 or xfs and mounted; a "power cut" is the kernel's FS_IOC_SHUTDOWN with
// FS_GOING_DOWN_NOLOGFLUSH (what is not yet in the on-disk log is dropped, exactly as if the power
// went: fsstests' `_scratch_shutdown`), then umount and mount again (the log is replayed). Also a
// small tmpfs, for filling a disk. All of it needs root and mount(8); each `...Unavailable`
// function says why a test must skip, or undefined when it can run.
//
//   const fs = createLoopFs('ext4');   // fs.dir is the mount point
//   fs.cut(); fs.remount(); fs.remove();
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, readFileSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type LoopFsType = 'ext4' | 'xfs';

export interface LoopFs {
  type: LoopFsType;
  // The mount point.
  dir: string;
  // The power cut: shuts the file system down without flushing its log.
  cut(): void;
  // Unmounts and mounts the image again (replaying its log).
  remount(): void;
  // Unmounts and deletes everything.
  remove(): void;
}

// FS_IOC_SHUTDOWN = _IOR('X', 125, __u32), and its flag FS_GOING_DOWN_NOLOGFLUSH.
const FS_IOC_SHUTDOWN = 0x8004587d;
const FS_GOING_DOWN_NOLOGFLUSH = 2;
// mkfs.xfs refuses images smaller than 300 MB; the image file is sparse, so this costs little.
const IMAGE_MB: Record<LoopFsType, number> = { ext4: 64, xfs: 320 };

function run(command: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(command, args, { encoding: 'utf8' });
}

function must(command: string, args: string[]): string {
  const result = run(command, args);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.error?.message}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

const found = new Map<string, boolean>();
const has = (command: string): boolean => {
  if (!found.has(command)) found.set(command, run('sh', ['-c', `command -v ${command}`]).status === 0);
  return found.get(command)!;
};

// Why mounting is impossible here, or undefined.
function mountUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'needs Linux (loop devices, mount)';
  if (process.getuid?.() !== 0) return 'needs root to mount file systems';
  if (!has('mount') || !has('umount')) return 'mount(8) is not installed';
  return undefined;
}

// Why a loop-mounted `type` file system cannot be made here (no root, no loop device, no mkfs, no
// way to issue the shutdown ioctl), or undefined.
export function loopFsUnavailable(type: LoopFsType): string | undefined {
  const why = mountUnavailable();
  if (why) return why;
  if (!has(`mkfs.${type}`)) return `mkfs.${type} is not installed (${type === 'xfs' ? 'xfsprogs' : 'e2fsprogs'})`;
  if (!has('losetup') || run('losetup', ['-f']).status !== 0) return 'no free loop device (losetup -f failed)';
  if (!has('python3') && !has('xfs_io')) return 'neither python3 nor xfs_io is there to issue FS_IOC_SHUTDOWN';
  // Try it once: a container may allow mount but not loop devices.
  try {
    createLoopFs(type).remove();
  } catch (error) {
    return `cannot mount a loop-device ${type} here: ${(error as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** Formats and mounts a fresh `type` image; see LoopFs. */
export function createLoopFs(type: LoopFsType): LoopFs {
  const base = mkdtempSync(join(tmpdir(), `savepoint-${type}-`));
  const image = join(base, 'image');
  const dir = join(base, 'mnt');
  mkdirSync(dir);
  closeSync(openSync(image, 'w'));
  truncateSync(image, IMAGE_MB[type] * 1024 * 1024);
  // Each mount gets a loop device of its own: mount(8) reuses a loop device already attached to the
  // image, and the kernel then hands back the old (shut down) file system if it is not gone yet.
  let device: string | undefined;
  const mount = () => {
    device = must('losetup', ['-f', '--show', image]).trim();
    // xfs refuses a second file system with the same UUID while the shut-down one lingers.
    must('mount', ['-t', type, ...(type === 'xfs' ? ['-o', 'nouuid'] : []), device, dir]);
  };
  // A process that just died may hold the file system for an instant: try again for a while.
  const umount = () => {
    let last: SpawnSyncReturns<string> | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      if (!isMounted(dir)) break;
      last = run('umount', [dir]);
      if (last.status === 0) break;
      spawnSync('sleep', ['0.1']);
    }
    if (isMounted(dir)) throw new Error(`umount ${dir} failed: ${last?.stderr}${run('sh', ['-c', `fuser -vm ${dir} 2>&1`]).stdout}`);
    if (device) run('losetup', ['-d', device]);
    device = undefined;
    // The old file system may be torn down a moment after umount returns: wait until no loop
    // device holds the image any more.
    for (let attempt = 0; attempt < 50 && run('losetup', ['-j', image]).stdout.trim() !== ''; attempt++) spawnSync('sleep', ['0.1']);
  };
  try {
    must(`mkfs.${type}`, type === 'xfs' ? ['-q', '-f', image] : ['-q', '-F', image]);
    mount();
  } catch (error) {
    if (device) run('losetup', ['-d', device]);
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
  let mounted = true;
  return {
    type,
    dir,
    cut() {
      shutdown(dir);
    },
    remount() {
      umount();
      mount();
    },
    remove() {
      if (mounted) umount();
      mounted = false;
      rmSync(base, { recursive: true, force: true });
    },
  };
}

function isMounted(dir: string): boolean {
  return readFileSync('/proc/mounts', 'utf8').split('\n').some((line) => line.split(' ')[1] === dir);
}

// FS_IOC_SHUTDOWN on the file system at `dir`, without flushing its log: xfs_io when it is there
// (it starts in ~3 ms, and its `shutdown` works on ext4 too), else python3's fcntl.ioctl.
function shutdown(dir: string): void {
  if (has('xfs_io')) {
    must('xfs_io', ['-x', '-c', 'shutdown', dir]); // without -f: the log is not flushed
  } else {
    const script = `import fcntl, os, struct, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.ioctl(fd, ${FS_IOC_SHUTDOWN}, struct.pack('I', ${FS_GOING_DOWN_NOLOGFLUSH}))\n`;
    must('python3', ['-c', script, dir]);
  }
}

export interface SmallTmpfs {
  dir: string;
  // Fills the file system up but for about `leaveKb` KB, with one file; returns its path.
  fill(leaveKb?: number): string;
  remove(): void;
}

// Why a tmpfs cannot be mounted here, or undefined.
export function tmpfsUnavailable(): string | undefined {
  const why = mountUnavailable();
  if (why) return why;
  try {
    createSmallTmpfs(1).remove();
  } catch (error) {
    return `cannot mount a tmpfs here: ${(error as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** Mounts a tmpfs of `sizeMb` MB on a fresh directory. */
export function createSmallTmpfs(sizeMb: number): SmallTmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-tmpfs-'));
  try {
    must('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    fill(leaveKb = 0) {
      const filler = join(dir, 'filler');
      const chunk = Buffer.alloc(64 * 1024, 1);
      const fd = openSync(filler, 'w');
      try {
        for (;;) writeFileSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      truncateSync(filler, Math.max(0, statSync(filler).size - leaveKb * 1024));
      return filler;
    },
    remove() {
      run('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
