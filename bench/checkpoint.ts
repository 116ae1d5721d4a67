// The checkpoint benchmark: what recording the working tree as a git tree costs in a repository of
// 10,000 files. The first checkpoint of a run (a new process, nothing cached) must take <= 1 s, and
// a checkpoint after a one-file edit <= 30 ms (p50 over 20 edits): the cost follows what changed,
// not the size of the repository.
//
// It measures the snapshotter's source (through tsx; the first checkpoint alone, bundled by esbuild), each scenario in its own
// child process (this file, started with `--stage`), so "first" really means a cold process: no
// stat cache, no index cache, no JIT. Registered in bench/run.ts as the group `checkpoint`; it also
// runs alone: `npm run build && node --import tsx bench/checkpoint.ts [--quick] [--keep]`.
//
// Scenarios (rows):
//   settled   10,000 committed files, index up to date (the usual repository): targets apply
//   packed    the same after `git gc` (the trees are in a pack, so the first checkpoint writes them)
//   racy      files written in the same second as the index (a fresh clone): git re-reads them
//   untracked 10,000 files never added to git: the first checkpoint hashes and stores every one
//   untracked at 20,000 (a node_modules someone forgot to ignore): first checkpoint ≤ 2 s and
//             ≤ 150 MB peak RSS, growing at most linearly to 40,000; after an edit ≤ 50 ms
//
// The RSS of an untracked stage is measured in a process of its own that does nothing but the
// first checkpoint (plain node loading a bundle of the snapshotter, no tsx, none of the bench's own paths): its maxRSS
// from getrusage, Node itself included. What it stored is removed again before the stage's own
// (in-process) first checkpoint, so that one is cold too.
import { spawnSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { collectGarbage, createBenchRepo, formatTable, latencyRow, megabytes, MemorySampler, now, percentile, runStageInChild, type BenchContext, type BenchGroup, type Row } from './lib.js';

type SnapshotModule = typeof import('../src/worktree/snapshot.js');
type ObjectsModule = typeof import('../src/git/object-store.js');
type RepositoryModule = typeof import('../src/git/repository.js');

const TARGET_FIRST_MS = 1000;
const TARGET_EDIT_P50_MS = 30;
const FILES = 10_000;
const EDITS = 20;
const BIG_FILES = 20_000;
const TARGET_BIG_FIRST_MS = 2000;
const TARGET_BIG_RSS_MB = 150;
const TARGET_BIG_EDIT_P50_MS = 50;

interface Library {
  WorktreeSnapshotter: SnapshotModule['WorktreeSnapshotter'];
  ObjectStore: ObjectsModule['ObjectStore'];
  findRepository: RepositoryModule['findRepository'];
}

async function loadLibrary(): Promise<Library> {
  // The snapshotter is not part of the library's exports (dist/ is a bundle of those): its source
  // is loaded, compiled by tsx as the bench runs.
  const load = async <M>(path: string) => (await import(new URL(`../src/${path}`, import.meta.url).href)) as M;
  const snapshot = await load<SnapshotModule>('worktree/snapshot.ts');
  const objects = await load<ObjectsModule>('git/object-store.ts');
  const repository = await load<RepositoryModule>('git/repository.ts');
  return { WorktreeSnapshotter: snapshot.WorktreeSnapshotter, ObjectStore: objects.ObjectStore, findRepository: repository.findRepository };
}

type Scenario = 'settled' | 'packed' | 'racy' | 'untracked';

interface StageSpec {
  scenario: Scenario;
  files: number;
  edits: number;
  keep: boolean;
}

interface StageResult {
  // The first checkpoint in this (cold) process.
  firstMs: number;
  // A second snapshotter in the same process, nothing changed (warm JIT, cold caches).
  secondFirstMs: number;
  // A checkpoint with nothing changed since the last one.
  unchangedMs: number;
  // One checkpoint after each one-file edit, and the process's CPU time for it (its worker
  // threads' included, git's not): under load, the steadier measure.
  editMs: number[];
  editCpuMs: number[];
  // One checkpoint after each edit_file or write_file, which names the one path it changed.
  editPathMs: number[];
  // `git status` alone, as the snapshotter runs it.
  statusMs: number[];
  // Files in the first checkpoint, and objects written by it.
  fileCount: number;
  // The process's peak RSS from just before the first checkpoint to just after it, and before it.
  firstPeakRssMb: number;
  rssBeforeMb: number;
  // The first checkpoint in a process doing only that (untracked stages): time, maxRSS, RSS before.
  alone?: AloneResult;
}

/** What the first checkpoint in a process of its own took, and gave. */
export interface AloneResult {
  /** Finding the repository (`git rev-parse`) and the checkpoint. */
  ms: number;
  /** The checkpoint alone, the repository found before it, as a run finds it when its journal opens. */
  checkpointMs: number;
  maxRssMb: number;
  rssBeforeMb: number;
  tree: string;
}

// The first checkpoint in a plain node process of its own, loading the built code and nothing else.
const ALONE_SOURCE = `
const [root, bundle] = process.argv.slice(1);
const { WorktreeSnapshotter, ObjectStore, findRepository } = await import(bundle);
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const repo = findRepository(root);
const t1 = performance.now();
const tree = new WorktreeSnapshotter(repo, new ObjectStore(repo.commonDir)).snapshot().tree;
const t2 = performance.now();
const mb = (bytes) => bytes / (1024 * 1024);
process.stdout.write(JSON.stringify({ ms: t2 - t0, checkpointMs: t2 - t1, maxRssMb: process.resourceUsage().maxRSS / 1024, rssBeforeMb: mb(rssBefore), tree }));
`;

// The snapshotter, its object store and findRepository bundled into one file by esbuild, as the
// library's bundle would hold them (they are not among its exports): plain node loads it, no tsx.
// `src` is this checkout's src/ unless another build's (BENCH_SCAN_BASELINE) is named.
const bundled = new Map<string, string>();
function snapshotterBundle(src = fileURLToPath(new URL('../src/', import.meta.url))): string {
  const known = bundled.get(src);
  if (known) return known;
  // Inside node_modules/, so that its imports of the dependencies resolve.
  const out = fileURLToPath(new URL(`../node_modules/.cache/savepoint-bench/snapshotter-${process.pid}-${bundled.size}.mjs`, import.meta.url));
  buildSync({
    stdin: { contents: `export { WorktreeSnapshotter } from './worktree/snapshot.ts'; export { ObjectStore } from './git/object-store.ts'; export { findRepository } from './git/repository.ts';`, resolveDir: src, loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: out, packages: 'external', logLevel: 'error',
  });
  bundled.set(src, out);
  return out;
}

/**
 * The first checkpoint of the working tree at `root` in a plain node process of its own (the
 * snapshotter's source bundled: this checkout's, or the src/ directory `src` names); what it stored
 * is removed again unless `keepObjects`.
 */
export function firstCheckpointAlone(root: string, options: { keepObjects?: boolean; src?: string } = {}): AloneResult {
  const objects = join(root, '.git', 'objects');
  const before = new Set(objectFiles(objects));
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', ALONE_SOURCE, root, pathToFileURL(snapshotterBundle(options.src)).href], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (result.status !== 0) throw new Error(`the first checkpoint alone failed: ${result.stderr}`);
  // What it stored goes again: the stage's own first checkpoint must find nothing stored.
  if (!options.keepObjects) for (const file of objectFiles(objects)) if (!before.has(file)) rmSync(file);
  return JSON.parse(result.stdout) as AloneResult;
}

function objectFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

// ── The repository ──────────────────────────────────────────────────────────────────────────────

// `files` source-like files of ~300 bytes in 100 directories (two levels), like a mid-size project.
function populate(root: string, files: number): string[] {
  const paths: string[] = [];
  const perDir = 100;
  for (let i = 0; i < files; i++) {
    const dir = `src/pkg${String(Math.floor(i / perDir / 10)).padStart(2, '0')}/mod${String(Math.floor(i / perDir) % 10)}`;
    const path = `${dir}/file${String(i).padStart(5, '0')}.ts`;
    if (i % perDir === 0) mkdirSync(join(root, dir), { recursive: true });
    const body = [`// file ${i}`, `export function f${i}(x: number): number {`, `  return x * ${i} + ${(i * 7919) % 1000};`, '}', ''];
    while (body.join('\n').length < 300) body.splice(1, 0, `// padding line for file ${i}, so the file has a realistic size`);
    writeFileSync(join(root, path), body.join('\n'));
    paths.push(path);
  }
  return paths;
}

// Sets every file's mtime a minute back, so git's index (written after) is not "racily clean".
function age(root: string, paths: string[]): void {
  const past = new Date(Date.now() - 60_000);
  for (const path of paths) utimesSync(join(root, path), past, past);
}

// ── A stage, in a child process ─────────────────────────────────────────────────────────────────

async function runStage(spec: StageSpec): Promise<StageResult> {
  const context = { keep: spec.keep, log: (m: string) => console.error(m) };
  const repo = createBenchRepo(context, `checkpoint-${spec.scenario}`, { fanout: true });
  const home = process.cwd();
  try {
    const paths = populate(repo.root, spec.files);
    if (spec.scenario !== 'racy') age(repo.root, paths);
    if (spec.scenario !== 'untracked') {
      repo.git('add', '-A');
      repo.git('commit', '-q', '-m', `${spec.files} files`);
    }
    if (spec.scenario === 'packed') repo.git('gc', '-q');
    if (spec.scenario === 'settled' || spec.scenario === 'packed') repo.git('update-index', '--refresh');
    // Setting up wrote ~10,000 files and as many objects: let the kernel write them back now, or the
    // first fsyncs of the measurement wait for that (the repository exists long before a run).
    spawnSync('sync');
    const alone = spec.scenario === 'untracked' ? firstCheckpointAlone(repo.root) : undefined;

    // Loaded only now: the timed first checkpoint includes nothing but the library's own work.
    const lib = await loadLibrary();
    // In the repository's root, as `savepoint run` usually is (the stat pool then lstats paths
    // relative to it).
    process.chdir(repo.root);
    const snapshotterFor = () => {
      const found = lib.findRepository(repo.root);
      return new lib.WorktreeSnapshotter(found, new lib.ObjectStore(found.commonDir));
    };
    collectGarbage();
    const rssBeforeMb = megabytes(process.memoryUsage().rss);
    const memory = new MemorySampler(2);
    let t0 = now();
    const snapshotter = snapshotterFor();
    const first = snapshotter.snapshot();
    const firstMs = now() - t0;
    const firstPeakRssMb = megabytes(memory.stop().peakRss);
    if (first.files.size < spec.files) throw new Error(`the first checkpoint holds ${first.files.size} files, expected ${spec.files}+`);
    if (alone && alone.tree !== first.tree) throw new Error('the first checkpoint alone and in the stage disagree');

    t0 = now();
    const again = snapshotterFor().snapshot();
    const secondFirstMs = now() - t0;
    if (again.tree !== first.tree) throw new Error('two snapshotters disagree on an unchanged tree');

    t0 = now();
    const unchanged = snapshotter.snapshot();
    const unchangedMs = now() - t0;
    if (unchanged.tree !== first.tree) throw new Error('an unchanged working tree gave a new checkpoint');

    const editMs: number[] = [];
    const editCpuMs: number[] = [];
    let previous = first.tree;
    for (let i = 0; i < spec.edits; i++) {
      // A different file each time, in different directories, as an agent's edits would be.
      const path = paths[(i * 997) % paths.length]!;
      writeFileSync(join(repo.root, path), `// edited ${i}\nexport const edited = ${i};\n`);
      collectGarbage();
      const cpu = process.cpuUsage();
      t0 = now();
      const snap = snapshotter.snapshot();
      editMs.push(now() - t0);
      const used = process.cpuUsage(cpu);
      editCpuMs.push((used.user + used.system) / 1000);
      if (snap.tree === previous) throw new Error(`edit ${i} did not change the checkpoint`);
      previous = snap.tree;
    }
    // An edit_file or write_file names its path: the checkpoint updates that path only.
    const editPathMs: number[] = [];
    for (let i = 0; i < spec.edits; i++) {
      const path = paths[(i * 991 + 7) % paths.length]!;
      writeFileSync(join(repo.root, path), `// edited by a tool ${i}\nexport const edited = ${i};\n`);
      collectGarbage();
      t0 = now();
      const snap = snapshotter.snapshotPaths([path]);
      editPathMs.push(now() - t0);
      if (snap.tree === previous) throw new Error(`tool edit ${i} did not change the checkpoint`);
      previous = snap.tree;
    }
    // The floor: the one git command every checkpoint runs (it lstat()s every tracked file and
    // reads every directory for untracked ones).
    const statusMs: number[] = [];
    for (let i = 0; i < spec.edits; i++) {
      t0 = now();
      spawnSync('git', ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all'], {
        cwd: repo.root,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
        maxBuffer: 1 << 30,
      });
      statusMs.push(now() - t0);
    }
    // The last checkpoint must be what git itself makes of the working tree.
    verifyAgainstGit(repo, previous);
    return { firstMs, secondFirstMs, unchangedMs, editMs, editCpuMs, editPathMs, statusMs, fileCount: first.files.size, firstPeakRssMb, rssBeforeMb, ...(alone ? { alone } : {}) };
  } finally {
    process.chdir(home);
    repo.remove();
  }
}

// `git add -A` into a scratch index + `git write-tree` must give the same tree id.
function verifyAgainstGit(repo: { root: string; git(...args: string[]): string }, tree: string): void {
  const scratch = join(repo.root, '.git', 'bench-index');
  const env = { GIT_INDEX_FILE: scratch };
  const run = (args: string[]) => {
    const result = spawnSync('git', args, { cwd: repo.root, env: { ...process.env, ...env }, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  };
  run(['add', '-A']);
  const expected = run(['write-tree']);
  if (expected !== tree) throw new Error(`the checkpoint ${tree} differs from git's own tree ${expected}`);
}

const SELF = fileURLToPath(import.meta.url);

function stageInChild(spec: StageSpec): Promise<StageResult> {
  return runStageInChild<StageResult>(SELF, spec, `checkpoint benchmark stage ${spec.scenario}`);
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────

async function run(context: BenchContext): Promise<Row[]> {
  const files = context.quick ? 2000 : FILES;
  const size = files.toLocaleString('en-US');
  const checked = files === FILES;
  const rows: Row[] = [];
  const scenarios: Array<{ scenario: Scenario; label: string; targets: boolean; files: number }> = [
    { scenario: 'settled', label: `${size} committed files`, targets: true, files },
    { scenario: 'packed', label: `${size} committed files, after git gc`, targets: true, files },
    { scenario: 'racy', label: `${size} files committed in the same second (fresh clone)`, targets: false, files },
    { scenario: 'untracked', label: `${size} untracked files`, targets: false, files },
    { scenario: 'untracked', label: `${(2 * files).toLocaleString('en-US')} untracked files`, targets: false, files: 2 * files },
    { scenario: 'untracked', label: `${(4 * files).toLocaleString('en-US')} untracked files`, targets: false, files: 4 * files },
  ];
  const untracked: StageResult[] = [];
  for (const { scenario, label, targets, files: count } of scenarios) {
    context.log(`stage: ${scenario}, ${count.toLocaleString('en-US')} files, ${EDITS} one-file edits`);
    const result = await stageInChild({ scenario, files: count, edits: EDITS, keep: context.keep });
    const target = (ok: boolean, text: string) => (checked && targets ? { target: text, ok } : {});
    rows.push({ what: `${label}: first checkpoint (cold process)`, n: result.fileCount, total: result.firstMs, ...target(result.firstMs <= TARGET_FIRST_MS, `≤ ${TARGET_FIRST_MS / 1000} s`) });
    if (result.alone) rows.push({ what: `${label}: first checkpoint in a process of its own`, n: result.fileCount, total: result.alone.ms });
    rows.push({ what: `${label}: first checkpoint, second snapshotter`, n: result.fileCount, total: result.secondFirstMs });
    rows.push({ what: `${label}: checkpoint, nothing changed`, n: 1, total: result.unchangedMs });
    const p50 = percentile(result.editMs, 50);
    rows.push(latencyRow(`${label}: checkpoint after a one-file edit`, result.editMs.length, result.editMs, target(p50 <= TARGET_EDIT_P50_MS, `p50 ≤ ${TARGET_EDIT_P50_MS} ms`)));
    rows.push(latencyRow(`${label}: the same, CPU time of the process (its threads', not git's)`, result.editCpuMs.length, result.editCpuMs));
    rows.push(latencyRow(`${label}: checkpoint after an edit_file (the one path it names)`, result.editPathMs.length, result.editPathMs));
    rows.push(latencyRow(`${label}: git status alone (the floor of a checkpoint)`, result.statusMs.length, result.statusMs));
    rows.push({ what: `${label}: p50 of an edit's checkpoint above git status's`, value: `${(p50 - percentile(result.statusMs, 50)).toFixed(1)} ms` });
    if (result.alone) rows.push({ what: `${label}: peak RSS of a process doing only the first checkpoint (Node at start)`, value: `${result.alone.maxRssMb.toFixed(0)} MB (${result.alone.rssBeforeMb.toFixed(0)} MB)` });
    rows.push({ what: `${label}: peak RSS of the bench process during the first checkpoint (before it)`, value: `${result.firstPeakRssMb.toFixed(0)} MB (${result.rssBeforeMb.toFixed(0)} MB)` });
    if (scenario === 'untracked') untracked.push(result);
  }
  // The big untracked case (20,000 files: an unignored node_modules) has targets of its own.
  const [, big, bigger] = untracked as [StageResult, StageResult, StageResult];
  const bigChecked = checked && big.fileCount >= BIG_FILES;
  const bigTarget = (ok: boolean, text: string) => (bigChecked ? { target: text, ok } : {});
  const bigP50 = percentile(big.editMs, 50);
  const bigRss = big.alone!.maxRssMb;
  const growth = (a: number, b: number) => b / Math.max(a, 1e-9);
  const timeGrowth = growth(big.alone!.ms, bigger.alone!.ms);
  const rssGrowth = growth(bigRss - big.alone!.rssBeforeMb, bigger.alone!.maxRssMb - bigger.alone!.rssBeforeMb);
  const editGrowth = growth(bigP50, percentile(bigger.editMs, 50));
  const count = (n: number) => n.toLocaleString('en-US');
  rows.push(
    { what: `${count(2 * files)} untracked: first checkpoint`, n: big.fileCount, total: big.firstMs, ...bigTarget(big.firstMs <= TARGET_BIG_FIRST_MS, `≤ ${TARGET_BIG_FIRST_MS / 1000} s`) },
    { what: `${count(2 * files)} untracked: peak RSS of a process doing only the first checkpoint`, value: `${bigRss.toFixed(0)} MB`, ...bigTarget(bigRss <= TARGET_BIG_RSS_MB, `≤ ${TARGET_BIG_RSS_MB} MB`) },
    { what: `${count(2 * files)} untracked: checkpoint after an edit, p50`, value: `${bigP50.toFixed(1)} ms`, ...bigTarget(bigP50 <= TARGET_BIG_EDIT_P50_MS, `≤ ${TARGET_BIG_EDIT_P50_MS} ms`) },
    {
      what: `untracked ${count(2 * files)} -> ${count(4 * files)}: first checkpoint's time ×${timeGrowth.toFixed(2)}, its RSS above Node's start ×${rssGrowth.toFixed(2)}, an edit's ×${editGrowth.toFixed(2)}`,
      value: `${Math.max(timeGrowth, rssGrowth, editGrowth).toFixed(2)}x`,
      ...bigTarget(Math.max(timeGrowth, rssGrowth, editGrowth) <= 2.2, '≤ 2.2x (linear)'),
    },
  );
  return rows;
}

export const checkpointGroup: BenchGroup = {
  name: 'checkpoint',
  description: `working-tree checkpoints in a ${FILES.toLocaleString('en-US')}-file repository: first one, and after a one-file edit`,
  run,
};

// ── Entry points: a stage in a child process, or the group on its own ───────────────────────────

if (process.argv[1] === SELF) {
  const at = process.argv.indexOf('--stage');
  if (at >= 0) {
    const spec = JSON.parse(process.argv[at + 1]!) as StageSpec;
    process.stdout.write(JSON.stringify(await runStage(spec)));
  } else {
    const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
    const rows = await run({ quick, keep: process.argv.includes('--keep'), log: (m) => console.error(m) });
    console.log(formatTable(rows));
    process.exitCode = rows.some((r) => r.ok === false) ? 1 : 0;
  }
}
