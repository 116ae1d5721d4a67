// The candidates for the journal's one read path, side by side on the same journal, at what a
// person waits on today:
//   resume-200, resume-20  a run opened from its snapshot: the commit, the trees down to the run,
//                          run.json, snapshot.json, the steps tree, the last shards and the 200 (or
//                          20, the usual case) entries after the snapshot;
//   log                    `savepoint log` / `show`: every entry of the run;
//   restore                a checkpoint restore: the last checkpoint's trees and blobs;
//   head-trees             a repository's first checkpoint: every tree of HEAD (no blobs);
// each on the journal as the run left it and (resume, log) after `git gc`. The candidates:
//   pack     savepoint's in-process pack reader with loose files (ObjectStore.read), one read at a time;
//   catfile  one long-lived `git cat-file --batch` (bench/cat-file.ts) started on the first read,
//            pipelined: every id a step knows written before its answers are awaited (a tree walk
//            one level at a time).
// Cold, as a CLI pays it: each measurement is a fresh `node` holding a ~60 MB heap (a CLI's at a
// resume), so git's process is spawned from that heap and the reader's code is not yet optimized.
// Timed from the first read to the last answer (git's spawn included): wall time, and CPU time
// (user + sys of node and of git's process, from /proc). The candidates alternate each round and
// the order flips every round; p50 of ROUNDS. The machine is shared: CPU time is the figure.
// Run alone: `node --import tsx bench/read-paths.ts [--quick] [--keep]`; REPO=<dir> reuses a
// repository it kept (or any with a run recorded by the CLI), SOURCE=<git dir> names the
// repository whose HEAD the head-trees row reads (default: this checkout's).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatFile } from './cat-file.js';
import { ObjectStore } from '../src/git/object-store.js';
import { parseCommit, parseTree, TREE_MODE, type ObjectType, type Tree } from '../src/git/git-object.js';
import { MAX_ENTRY_BYTES, MAX_RUN_RECORD_BYTES } from '../src/journal/fields.js';
import { createBenchRepo, percentile, runAlone, type BenchContext, type Row } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

interface Ask {
  oid: string;
  type: ObjectType;
  max?: number;
}

interface Candidate {
  one(ask: Ask): Promise<Buffer>;
  /** Reads many: the pack reader one after another, as its callers do; cat-file all asked, then awaited. */
  many(asks: Ask[]): Promise<Buffer[]>;
  /** CPU milliseconds of any child process so far. */
  childCpu(): number;
  close(): void;
}

function packCandidate(gitdir: string): Candidate {
  const store = new ObjectStore(gitdir);
  return {
    one: (ask) => store.read(ask.oid, ask.type, ask.max),
    many: async (asks) => {
      const out: Buffer[] = [];
      for (const ask of asks) out.push(await store.read(ask.oid, ask.type, ask.max));
      return out;
    },
    childCpu: () => 0,
    close: () => {},
  };
}

function catFileCandidate(gitdir: string): Candidate {
  const git = new CatFile(gitdir);
  return {
    one: (ask) => git.read(ask.oid, ask.type, ask.max),
    many: (asks) => Promise.all(asks.map((ask) => git.read(ask.oid, ask.type, ask.max))),
    // The task's time on a CPU, in nanoseconds (git cat-file is one thread).
    childCpu: () => (git.pid ? Number(fs.readFileSync(`/proc/${git.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6 : 0),
    close: () => git.close(),
  };
}

const tree = (oid: string): Ask => ({ oid, type: 'tree' });
const sub = (t: Tree, name: string): string => {
  const entry = t.get(name);
  if (!entry) throw new Error(`no ${name}`);
  return entry.oid;
};

// The trees from a commit down to runs/<run>, one level at a time as the journal reads them.
async function runTree(c: Candidate, tip: string, run: string): Promise<Tree> {
  const root = parseTree(await c.one(tree(parseCommit(tip, await c.one({ oid: tip, type: 'commit' })).tree)));
  const runs = parseTree(await c.one(tree(sub(root, 'runs'))));
  return parseTree(await c.one(tree(sub(runs, run))));
}

// The entry blobs of `shards` (tree ids), in order.
async function entryAsks(c: Candidate, shards: string[]): Promise<Ask[]> {
  const trees = await c.many(shards.map(tree));
  return trees.flatMap((body) => [...parseTree(body).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, e]) => ({ oid: e.oid, type: 'blob' as const, max: MAX_ENTRY_BYTES })));
}

async function resume(c: Candidate, tip: string, run: string, entries: number): Promise<number> {
  const runT = await runTree(c, tip, run);
  const [, , steps] = await c.many([
    { oid: sub(runT, 'run.json'), type: 'blob', max: MAX_RUN_RECORD_BYTES },
    { oid: sub(runT, 'snapshot.json'), type: 'blob', max: MAX_RUN_RECORD_BYTES },
    tree(sub(runT, 'steps')),
  ]);
  const shards = [...parseTree(steps!).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, e]) => e.oid);
  // The last shards, enough for `entries` entry files (a shard holds 100 steps).
  const asks = await entryAsks(c, shards.slice(-Math.max(2, Math.ceil(entries / 100) + 1)));
  const bodies = await c.many(asks.slice(-entries));
  return bodies.length;
}

async function log(c: Candidate, tip: string, run: string): Promise<number> {
  const runT = await runTree(c, tip, run);
  const steps = parseTree(await c.one(tree(sub(runT, 'steps'))));
  const shards = [...steps.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, e]) => e.oid);
  const bodies = await c.many(await entryAsks(c, shards));
  return bodies.length;
}

// Every tree under `root`, a level at a time; with `blobs`, every blob too (each level's at once).
async function walk(c: Candidate, root: string, blobs: boolean): Promise<number> {
  let level = [root];
  let read = 0;
  while (level.length) {
    const trees = await c.many(level.map(tree));
    read += trees.length;
    const next: string[] = [];
    const files: Ask[] = [];
    for (const body of trees) {
      for (const [, e] of parseTree(body)) {
        if (e.mode === TREE_MODE) next.push(e.oid);
        else if (blobs && e.mode !== '160000') files.push({ oid: e.oid, type: 'blob' });
      }
    }
    if (files.length) read += (await c.many(files)).length;
    level = next;
  }
  return read;
}

// One measurement, in this (fresh) process: prints {wall, cpu, objects} as JSON.
async function worker(candidate: string, workload: string, gitdir: string, oid: string, run: string): Promise<void> {
  // A CLI's heap at a resume is ~60 MB: git's process is spawned from one that size here too.
  const ballast = Array.from({ length: 250_000 }, (_, i) => ({ i, text: `ballast ${i} `.repeat(4) }));
  const c = candidate === 'pack' ? packCandidate(gitdir) : catFileCandidate(gitdir);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let objects: number;
  if (workload.startsWith('resume-')) objects = await resume(c, oid, run, Number(workload.slice('resume-'.length)));
  else if (workload === 'log') objects = await log(c, oid, run);
  else if (workload === 'restore') objects = await walk(c, oid, true);
  else if (workload === 'head-trees') objects = await walk(c, parseCommit(oid, await c.one({ oid, type: 'commit' })).tree, false);
  else throw new Error(`no workload ${workload}`);
  const wall = performance.now() - t0;
  const own = process.cpuUsage(cpu0);
  const cpu = (own.user + own.system) / 1000 + c.childCpu();
  c.close();
  process.stdout.write(JSON.stringify({ wall, cpu, objects, heapMB: Math.round(process.memoryUsage().heapUsed / 1e6), ballast: ballast.length }));
}

interface Workload {
  label: string;
  workload: string;
  gitdir: string;
  oid: string;
  run: string;
}

function measure(w: Workload, rows: Row[], log: (m: string) => void): void {
  const samples: Record<string, { wall: number[]; cpu: number[]; objects: number }> = {
    pack: { wall: [], cpu: [], objects: 0 },
    catfile: { wall: [], cpu: [], objects: 0 },
  };
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS; // 150-180 ms of CPU at every start, outside the window but not worth it
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? ['catfile', 'pack'] : ['pack', 'catfile'];
    for (const candidate of order) {
      const out = spawnSync(process.execPath, ['--import', 'tsx', SELF, '--worker', candidate, w.workload, w.gitdir, w.oid, w.run], { env, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`${candidate} ${w.workload} failed: ${out.stderr}`);
      const result = JSON.parse(out.stdout) as { wall: number; cpu: number; objects: number };
      samples[candidate]!.wall.push(result.wall);
      samples[candidate]!.cpu.push(result.cpu);
      samples[candidate]!.objects = result.objects;
    }
  }
  const p = (s: number[]) => percentile(s, 50).toFixed(1);
  const pack = samples.pack!;
  const cat = samples.catfile!;
  const line = `${w.label}, ${pack.objects} objects: CPU p50 pack ${p(pack.cpu)} ms, cat-file ${p(cat.cpu)} ms (${(percentile(cat.cpu, 50) / percentile(pack.cpu, 50)).toFixed(2)}x); wall p50 pack ${p(pack.wall)} ms, cat-file ${p(cat.wall)} ms (${(percentile(cat.wall, 50) / percentile(pack.wall, 50)).toFixed(2)}x)`;
  log(line);
  rows.push({ what: `${w.label}: CPU, pack reader / cat-file`, value: `${p(pack.cpu)} / ${p(cat.cpu)} ms` });
  rows.push({ what: `${w.label}: wall, pack reader / cat-file`, value: `${p(pack.wall)} / ${p(cat.wall)} ms` });
}

const git = (gitdir: string, ...args: string[]): string => {
  const out = spawnSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr}`);
  return out.stdout.trim();
};

function journalRows(label: string, gitdir: string, rows: Row[], context: BenchContext, only?: string[]): void {
  const tip = git(gitdir, 'rev-parse', 'agent-journal');
  const run = git(gitdir, 'ls-tree', '--name-only', 'agent-journal', 'runs/').split('\n')[0]!.slice('runs/'.length);
  // The last checkpoint: the tree the run's worktree/ holds at the tip.
  const checkpoint = git(gitdir, 'rev-parse', `agent-journal:runs/${run}/worktree`);
  const workloads = only ?? ['resume-20', 'resume-200', 'log', 'restore'];
  for (const workload of workloads) {
    const oid = workload === 'restore' ? checkpoint : tip;
    measure({ label: `${label}: ${workload}`, workload, gitdir, oid, run }, rows, context.log);
  }
}

async function run(context: BenchContext): Promise<Row[]> {
  const turns = context.quick ? 150 : 1500;
  const kept = process.env.REPO;
  const repo = kept ? { root: kept } : createBenchRepo({ ...context, keep: true }, 'readpaths', { fanout: true });
  if (!kept) {
    // A small source tree, so that a checkpoint has files to restore.
    for (let d = 0; d < 10; d++) {
      fs.mkdirSync(join(repo.root, `src${d}`), { recursive: true });
      for (let f = 0; f < 30; f++) fs.writeFileSync(join(repo.root, `src${d}`, `file${f}.js`), `export const v = ${d * 100 + f};\n`.repeat(40));
    }
    spawnSync('git', ['add', '-A'], { cwd: repo.root });
    spawnSync('git', ['commit', '-qm', 'sources'], { cwd: repo.root });
    const script = join(repo.root, '..', `readpaths-script-${process.pid}.json`);
    const write = (i: number) => ({ name: 'write_file', input: { path: `src${i % 10}/file${i % 30}.js`, content: `export const value = ${i};\n`.repeat(1 + (i % 7)) } });
    fs.writeFileSync(script, JSON.stringify({ model: 'scripted', turns: [...Array.from({ length: turns }, (_, i) => ({ text: `turn ${i}`, tools: [write(i)] })), { text: 'done' }] }));
    context.log(`read-paths: recording ${turns} turns in ${repo.root}`);
    const live = spawnSync(process.execPath, [BIN, 'run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'write the modules'], { cwd: repo.root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    if (live.status !== 0) throw new Error(`the recorded run failed: ${live.stderr}`);
  }
  const rows: Row[] = [];
  journalRows('as the run left it', join(repo.root, '.git'), rows, context);
  // After `git gc`, on a copy (a kept repository is left as it was).
  const gced = `${repo.root}-gc`;
  fs.rmSync(gced, { recursive: true, force: true });
  fs.cpSync(join(repo.root, '.git'), join(gced, '.git'), { recursive: true });
  spawnSync('git', ['gc', '-q'], { cwd: gced });
  journalRows('after git gc', join(gced, '.git'), rows, context, ['resume-20', 'resume-200', 'log']);
  fs.rmSync(gced, { recursive: true, force: true });
  const source = process.env.SOURCE ?? git(join(fileURLToPath(new URL('..', import.meta.url)), '.git'), 'rev-parse', '--git-common-dir');
  measure({ label: 'first checkpoint: HEAD trees', workload: 'head-trees', gitdir: source, oid: git(source, 'rev-parse', 'HEAD'), run: '' }, rows, context.log);
  if (!context.keep && !kept) fs.rmSync(repo.root, { recursive: true, force: true });
  return rows;
}

if (process.argv[2] === '--worker') {
  const [candidate, workload, gitdir, oid, run] = process.argv.slice(3) as [string, string, string, string, string];
  await worker(candidate, workload, gitdir, oid, run);
} else await runAlone(import.meta.url, run);
