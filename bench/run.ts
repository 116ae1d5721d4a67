// `npm run bench [-- <group>...] [--quick] [--keep] [--json <file>]`
//
// Runs the registered benchmark groups (all of them, or the ones named) and prints one table on
// stdout; progress goes to stderr. Exits 1 when a row misses its target. To add a benchmark, write
// a module exporting a BenchGroup (see bench/lib.ts) and add it to `groups` below.
import { rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { caCertsNote, collectGarbage, createBenchRoot, formatTable, type BenchContext, type BenchGroup, type Row } from './lib.js';
import { journalGroup } from './journal.js';
import { peersGroup } from './peers.js';
import { runsGroup } from './runs.js';
import { agentGroup } from './agent.js';
import { checkpointGroup } from './checkpoint.js';
import { longRunGroup } from './long-run.js';
import { gitPartsGroup } from './git-parts.js';
import { readingGroup } from './reading.js';
import { scanGroup } from './scan.js';
import { machinesGroup } from './machines.js';
import { subagentsGroup } from './subagents.js';
import { parallelGroup } from './parallel-reads.js';
import { sessionGroup } from './session.js';
import { storageGroup } from './storage.js';

const groups: BenchGroup[] = [journalGroup, agentGroup, checkpointGroup, scanGroup, longRunGroup, gitPartsGroup, peersGroup, runsGroup, readingGroup, machinesGroup, subagentsGroup, parallelGroup, sessionGroup, storageGroup];

function usage(): string {
  return [
    'usage: npm run bench -- [group...] [--quick] [--keep] [--json <file>]',
    '  --quick   smaller runs (no 10,000-step run), for a fast look',
    '  --keep    keep the temporary repositories',
    '  --json    also write the rows as JSON to <file>',
    'groups:',
    ...groups.map((g) => `  ${g.name.padEnd(10)} ${g.description}`),
  ].join('\n');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const names: string[] = [];
  let quick = process.env.BENCH_QUICK === '1';
  let keep = false;
  let json: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--keep') keep = true;
    else if (arg === '--json') json = args[++i];
    else if (arg === '--help' || arg === '-h') {
      console.log(usage());
      return 0;
    } else if (arg.startsWith('-')) {
      console.error(`unknown option ${arg}\n${usage()}`);
      return 2;
    } else names.push(arg);
  }
  const unknown = names.filter((n) => !groups.some((g) => g.name === n));
  if (unknown.length) {
    console.error(`unknown benchmark group ${unknown.join(', ')}\n${usage()}`);
    return 2;
  }
  const selected = names.length ? groups.filter((g) => names.includes(g.name)) : groups;
  if (!globalThis.gc) console.error('note: run with --expose-gc (npm run bench does) for a gc between groups');

  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'}), Node ${process.version}, ${process.platform}`;
  const context: BenchContext = { quick, keep, log: (m) => console.error(m) };
  const started = performance.now();
  const loadBefore = loadavg();
  const results: Array<{ group: string; rows: Row[] }> = [];
  // Every file the groups make lands under one directory, removed only at the end (see lib.ts).
  const root = createBenchRoot();
  process.env.BENCH_ROOT = root;
  try {
    for (const group of selected) {
      collectGarbage();
      console.error(`── ${group.name}${quick ? ' (quick)' : ''}`);
      results.push({ group: group.name, rows: await group.run(context) });
    }
  } finally {
    if (keep) console.error(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  const seconds = (performance.now() - started) / 1000;
  const load = (when: string, [one, five]: number[]) => `${when} ${one!.toFixed(2)} / ${five!.toFixed(2)}`;

  for (const { group, rows } of results) {
    console.log(`\n${group}${quick ? ' (quick)' : ''}: ${machine}`);
    console.log(`load average (1 / 5 min): ${load('before', loadBefore)}, ${load('after', loadavg())} (other work on the machine skews fsync-bound numbers)`);
    console.log(`${caCertsNote()}\n`);
    console.log(formatTable(rows));
  }
  const misses = results.flatMap((r) => r.rows).filter((r) => r.ok === false);
  console.log(`\n${misses.length ? `${misses.length} target(s) missed` : 'all targets met'} in ${seconds.toFixed(0)} s`);
  if (json) writeFileSync(json, `${JSON.stringify({ machine, quick, seconds, results }, null, 2)}\n`);
  return misses.length ? 1 : 0;
}

process.exitCode = await main();
