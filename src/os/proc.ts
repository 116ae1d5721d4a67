// What Linux's /proc says about processes, for telling a live process from a dead one whose pid was
// handed out again. Everything here is undefined off Linux (no /proc): callers then fall back.
// Tested in test/locks/zombies.test.ts.
import { hostname } from 'node:os';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The fields of /proc/<pid>/stat after the command name: [0] the state (`Z`: a zombie), [2] the
 * process group, [19] the start time in clock ticks since boot.
 */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

// Both read once: neither changes while this process lives (every command a run starts records them).
let boot: { id: string | undefined } | undefined;
let namespace: { id: string | undefined } | undefined;

/** This boot of this kernel: pids of another boot mean nothing here. */
export function bootId(): string | undefined {
  boot ??= { id: readQuietly(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined) };
  return boot.id;
}

/** `pid:[4026531836]`: the pid namespace this process sees pids in (a container has its own). */
export function pidNamespace(): string | undefined {
  namespace ??= { id: readQuietly(() => readlinkSync('/proc/self/ns/pid')) };
  return namespace.id;
}

function readQuietly(read: () => string | undefined): string | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** A process as a lock file names it: its pid, and where and since when that pid means it. */
export interface ProcessIdentity {
  pid: number;
  /** Its start time in clock ticks since boot (Linux), so a reused pid is not mistaken for it. */
  startTime?: string;
  /** Where the pid means something: this boot of this kernel, and this pid namespace. */
  bootId?: string;
  pidNamespace?: string;
}

/** This process, as a lock file it holds names it. */
export function thisProcess(): ProcessIdentity {
  return { pid: process.pid, startTime: procStat(process.pid)?.[19], bootId: bootId(), pidNamespace: pidNamespace() };
}

/** Whether `owner`'s pid means a process here: the same boot and the same pid namespace as this one. */
export function pidMeansHere(owner: ProcessIdentity): boolean {
  return (
    owner.bootId !== undefined && owner.bootId === bootId() && owner.pidNamespace !== undefined && owner.pidNamespace === pidNamespace()
  );
}

/**
 * Whether the process `owner` names still runs (its pid meaning a process here: pidMeansHere). A
 * zombie (state Z: it ended, and its parent has not reaped it yet) runs nothing: it is dead.
 */
export function stillRuns(owner: ProcessIdentity): boolean {
  if (!signalReaches(owner.pid)) return false;
  const fields = procStat(owner.pid);
  if (fields?.[0] === 'Z') return false; // ended, not yet reaped by its parent
  const start = fields?.[19];
  return owner.startTime === undefined || start === undefined || start === owner.startTime;
}

/**
 * Whether any process of the process group `pgid` still runs. A signal to the group reaches its
 * zombies too (ended processes their parent has not reaped: in a container whose PID 1 does not
 * reap promptly, an orphaned command's processes stay so for a while), so the group is judged as
 * the kernel sees its members: a group whose members are all zombies is dead. Off Linux (no
 * /proc), whether a signal reaches the group is all that can be told.
 */
export function groupRuns(pgid: number): boolean {
  if (!signalReaches(-pgid)) return false;
  const group = String(pgid);
  const leader = procStat(pgid);
  if (leader && leader[0] !== 'Z' && leader[2] === group) return true; // its leader runs: no need to look further
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (stat && stat[2] === group && stat[0] !== 'Z') return true;
  }
  return false;
}

// Whether signal 0 reaches `target` (a pid, or a group as -pgid): false only when nothing is
// there (ESRCH); a process that exists but is not ours to signal (EPERM) is there.
function signalReaches(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Whether process `pid` is stopped (SIGSTOP, Ctrl-Z: state T; a debugger's stop: t), so it renews
 * nothing until someone sends it SIGCONT. False when it cannot be told (no /proc).
 */
export function isStopped(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state === 'T' || state === 't';
}

/** This machine's name, as run.json records it with each attempt. */
export function hostName(): string {
  return hostname();
}

/** This process's soft limit of open files (`ulimit -n`), from /proc/self/limits; undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}
