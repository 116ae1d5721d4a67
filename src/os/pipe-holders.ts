// Which processes hold a pipe open, as Linux's /proc tells it. A command's output pipe that stays
// open after its process group was killed is held by a process that left the group (`setsid`, a
// daemon's double fork, a job control group): run_bash names it rather than wait on it. Everything
// here is empty off Linux (no /proc): callers then say so without names.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { procStat } from './proc.js';

/**
 * What `fd` of process `pid` is open on, when it is a pipe or a socket: `pipe:[12345]` or
 * `socket:[12345]` (Node's stdio pipes are socket pairs). Undefined for anything else, a process or
 * descriptor that is gone, or a system without /proc.
 */
export function openPipeId(pid: number, fd: number): string | undefined {
  try {
    const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return /^(pipe|socket):\[\d+\]$/.test(target) ? target : undefined;
  } catch {
    return undefined;
  }
}

/** A process holding a pipe open. */
export interface PipeHolder {
  pid: number;
  /** Its process group, when /proc still says (undefined: it exited meanwhile). */
  group: number | undefined;
  /** Its command line, the arguments joined by spaces as `ps` shows them (raw: control characters are the caller's to show). */
  command: string;
}

/**
 * Every process but this one that has one of `ids` (openPipeId's answers) open, found by reading
 * /proc/<pid>/fd of every process: a scan of the whole machine, so for the rare case only. Processes
 * whose descriptors this user may not read are missed (as root, none). [] off Linux.
 */
export function pipeHolders(ids: readonly string[]): PipeHolder[] {
  if (ids.length === 0) return [];
  const wanted = new Set(ids);
  const holders: PipeHolder[] = [];
  for (const name of listQuietly('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const fds = listQuietly(`/proc/${pid}/fd`);
    if (!fds.some((fd) => wanted.has(linkQuietly(`/proc/${pid}/fd/${fd}`)))) continue;
    const group = Number(procStat(pid)?.[2]);
    holders.push({ pid, group: Number.isInteger(group) && group > 0 ? group : undefined, command: commandLine(pid) });
  }
  return holders;
}

// `/proc/<pid>/cmdline` as one line (the arguments are NUL-separated there), else the command's
// name in brackets as ps shows it (a process that emptied its arguments).
function commandLine(pid: number): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`).toString('utf8').replace(/\0+$/, '').split('\0');
    if (args.join('') !== '') return args.join(' ');
    return `[${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}]`;
  } catch {
    return '(exited)';
  }
}

function listQuietly(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function linkQuietly(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}
