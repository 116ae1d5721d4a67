// The processes of this machine seen through /proc (those of a pid namespace included, under their
// host pids): how a test finds a command's processes by a marker it put in their command line.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The pids of the living processes whose command line holds `marker` (a zombie counts as ended). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) continue;
      if (/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      found.push(Number(name));
    } catch {
      // it ended as we looked
    }
  }
  return found;
}

/** The pids of the living processes whose working folder is `dir` (as this process sees its path). */
export function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) !== dir) continue;
      if (/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      found.push(Number(name));
    } catch {
      // it ended as we looked, or is not ours to read
    }
  }
  return found;
}

/** The command line of process `pid` as /proc has it (arguments each ended by a NUL), or '' once it ended. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}
