// What Linux's /proc says about processes, for telling a live process from a dead one whose pid was
// handed out again. Everything here is undefined off Linux (no /proc): callers then fall back.
import { readFileSync, readlinkSync } from 'node:fs';

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

/** This boot of this kernel: pids of another boot mean nothing here. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `pid:[4026531836]`: the pid namespace this process sees pids in (a container has its own). */
export function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}
