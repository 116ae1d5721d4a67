// Commands a run has started and not yet seen end, recorded on this machine only
// (`.git/savepoint/commands/<run>.json`, never on the branch): run_bash puts each command in a process
// group of its own, so a kill -9 of savepoint leaves the command running. The next process to open
// the run finds it there and stops it before anything goes live, so `--in-flight rerun` never starts
// a second copy beside the first, and no orphan goes on changing files under a resumed run.
// Tested in test/locks/zombies.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unlinkQuietly, writeFileAtomically } from '../os/durable-file.js';
import { bootId, groupRuns, pidNamespace, procStat } from '../os/proc.js';

/** One command started by a step: its process group, and what identifies its leader. */
export interface LiveCommand {
  pgid: number;
  /**
   * The leader's start time in clock ticks since boot (/proc/<pid>/stat field 22), so a reused pid
   * is not taken for it; and where pids mean something (boot id, pid namespace).
   */
  startTime?: string;
  bootId?: string;
  pidNamespace?: string;
  step: number;
  description: string;
  startedAt: string;
  /**
   * The pid of the savepoint process that runs it, for a background command (it outlives its step):
   * that process opening the run again (an interactive session's next message) leaves it running.
   */
  owner?: number;
}

/** What became of a command found still running from a dead attempt. */
export interface OrphanReport extends LiveCommand {
  /**
   * stopped: ended by SIGTERM; killed: needed SIGKILL; unreachable: from another machine or pid
   * namespace, so it cannot be checked or signalled from here.
   */
  outcome: 'stopped' | 'killed' | 'unreachable';
}

function recordPath(commonDir: string, run: string): string {
  return join(commonDir, 'savepoint', 'commands', `${run}.json`);
}

function readRecords(commonDir: string, run: string): LiveCommand[] {
  try {
    const value = JSON.parse(readFileSync(recordPath(commonDir, run), 'utf8')) as unknown;
    return Array.isArray(value) ? (value as LiveCommand[]).filter((c) => Number.isInteger(c?.pgid) && c.pgid > 1) : [];
  } catch {
    return []; // none, or torn by a crash mid-write (the rename makes that all but impossible)
  }
}

function writeRecords(commonDir: string, run: string, records: LiveCommand[]): void {
  if (records.length === 0) unlinkQuietly(recordPath(commonDir, run));
  // Not fsynced: a power cut stops the commands too, so only a crash of savepoint must find the
  // record, and the page cache keeps it through that.
  else writeFileAtomically(recordPath(commonDir, run), `${JSON.stringify(records)}\n`);
}

/** Records that step `step` of `run` started the process group `pgid` (its leader's pid); `outlivesStep`: a background command, owned by this process. */
export function recordLiveCommand(
  commonDir: string,
  run: string,
  pgid: number,
  step: number,
  description: string,
  outlivesStep = false,
): void {
  const record: LiveCommand = {
    pgid,
    startTime: procStat(pgid)?.[19],
    bootId: bootId(),
    pidNamespace: pidNamespace(),
    step,
    description,
    startedAt: new Date().toISOString(),
    ...(outlivesStep ? { owner: process.pid } : {}),
  };
  writeRecords(commonDir, run, [...readRecords(commonDir, run).filter((c) => c.pgid !== pgid), record]);
}

/** Forgets the process group `pgid` of `run`: the command ended and its group is gone. */
export function clearLiveCommand(commonDir: string, run: string, pgid: number): void {
  const records = readRecords(commonDir, run);
  if (records.some((c) => c.pgid === pgid))
    writeRecords(
      commonDir,
      run,
      records.filter((c) => c.pgid !== pgid),
    );
}

/**
 * Stops every command `run` recorded that is still running: the caller holds the run's lock, so
 * whoever started them is dead, or is this very process (its background commands, recorded with
 * their owner: left running and recorded). SIGTERM to the whole group, then SIGKILL after `graceMs`. Returns
 * what was found (nothing when every recorded command had already ended) and clears the record.
 */
export async function stopOrphanedCommands(commonDir: string, run: string, graceMs = 2000): Promise<OrphanReport[]> {
  const reports: OrphanReport[] = [];
  const kept: LiveCommand[] = [];
  for (const command of readRecords(commonDir, run)) {
    // This very process's background command, from an earlier opening of the run: not an orphan.
    if (command.owner === process.pid && command.bootId === bootId() && command.pidNamespace === pidNamespace()) {
      kept.push(command);
      continue;
    }
    if (command.bootId !== bootId() || command.pidNamespace !== pidNamespace()) {
      reports.push({ ...command, outcome: 'unreachable' });
      continue;
    }
    if (!groupIsOurs(command)) continue;
    signalGroup(command.pgid, 'SIGTERM');
    if (await groupEnds(command, graceMs)) {
      reports.push({ ...command, outcome: 'stopped' });
      continue;
    }
    signalGroup(command.pgid, 'SIGKILL');
    await groupEnds(command, 1000);
    reports.push({ ...command, outcome: 'killed' });
  }
  writeRecords(commonDir, run, kept);
  return reports;
}

/**
 * Stops process groups this process started that still run, because its run was taken over while
 * it was paused (the new owner may not reach them: another pid namespace). SIGTERM now, SIGKILL
 * after `graceMs` to any group still alive then. Their step's result is never recorded.
 */
export function stopOwnCommands(pgids: Iterable<number>, graceMs = 2000): void {
  const groups = [...pgids];
  for (const pgid of groups) signalGroup(pgid, 'SIGTERM');
  if (groups.length === 0) return;
  setTimeout(() => {
    for (const pgid of groups) if (groupRuns(pgid)) signalGroup(pgid, 'SIGKILL');
  }, graceMs).unref();
}

// The group still has a living member (not a zombie: groupRuns), and it is the recorded one: its
// leader, if still there and running, has the recorded start time (while any member lives, Linux
// never hands the group's id out as a new pid).
function groupIsOurs(command: LiveCommand): boolean {
  if (!groupRuns(command.pgid)) return false;
  const leader = procStat(command.pgid);
  if (!leader || leader[0] === 'Z') return true; // the leader is gone (or a zombie); its group lives on
  return command.startTime === undefined || leader[19] === command.startTime;
}

async function groupEnds(command: LiveCommand, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!groupRuns(command.pgid)) return true;
    if (Date.now() > until) return false;
    await sleep(20);
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}
