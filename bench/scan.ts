// The scan benchmark: checkpoints on real-size trees, each beside git on the same tree in the same
// run, alternating (issue 25).
//
//   command  27,000 committed files (about babel's size). After a command (a one-file change the
//            checkpoint is not told about), the full scan costs at most 1.2x `git status` on the same
//            tree (p50s), taken as a run takes it: its new objects go with the step's commit. Beside it, git's own index machinery doing the same job: `git add -A` into
//            a private index seeded from .git/index, then `git write-tree`, objects fsynced
//            (core.fsync=loose-object, core.fsyncMethod=batch), which is what a checkpoint built
//            on git instead of the stat cache would cost.
//   clone    a fresh clone of a repository of 4,000 files (express-like: its objects all in the
//            clone's one pack): the first checkpoint, in a process of its own, at most 2x `git add
//            -A` into a scratch index seeded from .git/index (p50s); it writes no object. The
//            checkpoint is timed from the snapshotter's making, the repository found before it (a
//            run finds it once, when its journal opens); with the finding too in a row of its own.
//            Beside the reference, the same `git add -A` with the scratch index keeping
//            .git/index's timestamp: a fresh copy is newer than every file, so git skips its
//            racy-git check of the files checked out in the index's own second (most of a clone's),
//            which savepoint's own git status, run on .git/index, cannot skip.
//
// Each stage runs in a child process (this file with `--stage`). With BENCH_SCAN_BASELINE=<another
// savepoint checkout>, that checkout's snapshotter (its src/, through tsx) runs in the same
// alternation as `baseline`: before/after under the same load. Registered in bench/run.ts as the
// group `scan`; alone: `node --import tsx bench/scan.ts [--quick] [--keep]`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { firstCheckpointAlone } from './checkpoint.js';
import { createBenchRepo, createTempDir, latencyRow, now, percentile, runAlone, runStageInChild, type BenchContext, type BenchGroup, type Row } from './lib.js';

const SELF = fileURLToPath(import.meta.url);
const BASELINE = process.env.BENCH_SCAN_BASELINE ? resolve(process.env.BENCH_SCAN_BASELINE) : undefined;
const TARGET_SCAN_RATIO = 1.2;
const TARGET_CLONE_RATIO = 2.0;
const STATUS = ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all'];
const GIT_FSYNC = ['-c', 'core.fsync=loose-object', '-c', 'core.fsyncMethod=batch'];

interface StageSpec {
  stage: 'command' | 'clone';
  files: number;
  reps: number;
  keep: boolean;
}

interface StageResult {
  samples: Record<string, number[]>;
  written?: number[];
}

type Snapshotter = { snapshot(options?: { hold?: boolean }): { tree: string } };

async function snapshotterFrom(src: string, root: string): Promise<() => Snapshotter> {
  const load = async (path: string) => import(pathToFileURL(join(src, path)).href);
  const { WorktreeSnapshotter } = await load('worktree/snapshot.ts');
  const { ObjectStore } = await load('git/object-store.ts');
  const { findRepository } = await load('git/repository.ts');
  return () => {
    const repo = findRepository(root);
    return new WorktreeSnapshotter(repo, new ObjectStore(repo.commonDir)) as Snapshotter;
  };
}

// `files` files of ~300 bytes, 25 to a directory, four levels deep: packages/pNN/src/dNN/.
function populate(root: string, files: number): string[] {
  const paths: string[] = [];
  const past = new Date(Date.now() - 60_000); // older than the index: not "racily clean"
  for (let i = 0; i < files; i++) {
    const dir = `packages/p${String(Math.floor(i / 500)).padStart(2, '0')}/src/d${String(Math.floor(i / 25) % 20).padStart(2, '0')}`;
    if (i % 25 === 0) mkdirSync(join(root, dir), { recursive: true });
    const path = `${dir}/file${i}.js`;
    writeFileSync(join(root, path), `// file ${i}\nexport function f${i}(x) {\n  return x * ${i};\n}\n${'// padding for a realistic size\n'.repeat(8)}`);
    utimesSync(join(root, path), past, past);
    paths.push(path);
  }
  return paths;
}

function gitIn(root: string) {
  return (args: string[], env: NodeJS.ProcessEnv = {}): string => {
    const result = spawnSync('git', args, { cwd: root, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', ...env }, encoding: 'utf8', maxBuffer: 1 << 30 });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
}

// ── command: the full scan after a command, beside git status ──────────────────────────────────

async function commandStage(spec: StageSpec): Promise<StageResult> {
  const context = { keep: spec.keep, log: (m: string) => console.error(m) };
  const repo = createBenchRepo(context, 'scan-command', { fanout: true });
  try {
    const paths = populate(repo.root, spec.files);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', `${spec.files} files`);
    repo.git('update-index', '--refresh');
    spawnSync('sync');
    const git = gitIn(repo.root);
    const harnesses: Array<{ name: string; snapshotter: Snapshotter }> = [{ name: 'savepoint', snapshotter: (await snapshotterFrom(fileURLToPath(new URL('../src/', import.meta.url)), repo.root))() }];
    if (BASELINE) harnesses.push({ name: 'baseline', snapshotter: (await snapshotterFrom(join(BASELINE, 'src'), repo.root))() });
    for (const { snapshotter } of harnesses) snapshotter.snapshot(); // the first checkpoint: not measured here
    const priv = join(repo.root, '.git', 'bench-private-index');
    copyFileSync(join(repo.root, '.git', 'index'), priv);
    const privateEnv = { GIT_INDEX_FILE: priv, GIT_OPTIONAL_LOCKS: '1' };
    git([...GIT_FSYNC, 'add', '-A'], privateEnv);
    const samples: Record<string, number[]> = { status: [], git: [] };
    for (const { name } of harnesses) samples[name] = [];
    const timed = (what: string, work: () => string) => {
      const t0 = now();
      const out = work();
      samples[what]!.push(now() - t0);
      return out;
    };
    for (let i = 0; i < spec.reps; i++) {
      // What a command did: one file changed, in a different directory each time.
      const path = paths[(i * 997) % paths.length]!;
      writeFileSync(join(repo.root, path), `// changed by a command, ${i}\n`);
      const trees = new Map<string, string>();
      const measures: Array<() => void> = [
        () => void timed('status', () => git(STATUS)),
        () => trees.set('git', timed('git', () => (git([...GIT_FSYNC, 'add', '-A'], privateEnv), git(['write-tree'], privateEnv).trim()))),
        // As a run takes it: its few new objects held for the step's commit, which is durable anyway
        // (a build without hold writes them loose, each fsynced).
        ...harnesses.map(({ name, snapshotter }) => () => void trees.set(name, timed(name, () => snapshotter.snapshot({ hold: true }).tree))),
      ];
      // Each repetition in another order: none of them always runs first, after the change.
      for (let k = 0; k < measures.length; k++) measures[(i + k) % measures.length]!();
      const expected = trees.get('git');
      for (const [name, tree] of trees) if (tree !== expected) throw new Error(`${name}'s checkpoint ${tree} differs from git's own tree ${expected}`);
    }
    return { samples };
  } finally {
    repo.remove();
  }
}

// ── clone: the first checkpoint of a fresh clone, beside git add -A ────────────────────────────

async function cloneStage(spec: StageSpec): Promise<StageResult> {
  const context = { keep: spec.keep, log: (m: string) => console.error(m) };
  const origin = createBenchRepo(context, 'scan-origin');
  const clones = createTempDir(context, 'scan-clones');
  try {
    populate(origin.root, spec.files);
    origin.git('add', '-A');
    origin.git('commit', '-q', '-m', `${spec.files} files`);
    const builds: Array<{ name: string; src?: string }> = [{ name: 'savepoint' }, ...(BASELINE ? [{ name: 'baseline', src: join(BASELINE, 'src') }] : [])];
    const samples: Record<string, number[]> = { git: [], gitKept: [] };
    for (const { name } of builds) {
      samples[name] = [];
      samples[`${name}Found`] = [];
    }
    const written: number[] = [];
    for (let i = 0; i < spec.reps; i++) {
      // A clone as one from a server gets it: every object in one pack (not hard-linked copies).
      const root = join(clones.dir, `clone-${i}`);
      const cloned = spawnSync('git', ['clone', '-q', '--no-local', origin.root, root], { encoding: 'utf8' });
      if (cloned.status !== 0) throw new Error(`git clone: ${cloned.stderr}`);
      spawnSync('sync');
      const git = gitIn(root);
      const expected = git(['rev-parse', 'HEAD^{tree}']).trim();
      // git add -A into a scratch copy of .git/index. A copy made now is newer than every file, so
      // git trusts the stat data of the files checked out in the index's own second; keeping the
      // index's timestamp (as `cp -p` does) leaves git's racy-git check as it is on .git/index:
      // those files are read again (most of a fresh clone's, checked out in that second).
      const addInto = (what: 'git' | 'gitKept') => () => {
        const scratch = join(root, '.git', `bench-scratch-index-${what}`);
        copyFileSync(join(root, '.git', 'index'), scratch);
        if (what === 'gitKept') {
          const { atime, mtime } = statSync(join(root, '.git', 'index'));
          utimesSync(scratch, atime, mtime);
        }
        const t0 = now();
        git(['add', '-A'], { GIT_INDEX_FILE: scratch, GIT_OPTIONAL_LOCKS: '1' });
        samples[what]!.push(now() - t0);
        const tree = git(['write-tree'], { GIT_INDEX_FILE: scratch }).trim();
        if (tree !== expected) throw new Error(`git add -A (${what}) gave ${tree}, not the clone's HEAD tree ${expected}`);
      };
      const measures = [
        addInto('git'),
        addInto('gitKept'),
        ...builds.map(({ name, src }) => () => {
          const before = looseObjects(root);
          const alone = firstCheckpointAlone(root, { keepObjects: true, ...(src ? { src } : {}) });
          samples[name]!.push(alone.checkpointMs);
          samples[`${name}Found`]!.push(alone.ms);
          if (name === 'savepoint') written.push(looseObjects(root) - before);
          if (alone.tree !== expected) throw new Error(`the clone's first checkpoint (${name}) ${alone.tree} is not its HEAD tree ${expected}`);
        }),
      ];
      for (let k = 0; k < measures.length; k++) measures[(i + k) % measures.length]!();
    }
    return { samples, written };
  } finally {
    origin.remove();
    clones.remove();
  }
}

// Loose objects and packs in a repository's object store, counted together.
function looseObjects(root: string): number {
  const objects = join(root, '.git', 'objects');
  let count = 0;
  for (const dir of readdirSync(objects)) {
    if (dir === 'pack') count += readdirSync(join(objects, dir)).filter((name) => name.endsWith('.pack')).length;
    else if (/^[0-9a-f]{2}$/.test(dir)) count += readdirSync(join(objects, dir)).length;
  }
  return count;
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────

async function run(context: BenchContext): Promise<Row[]> {
  const files = context.quick ? 5000 : 27_000;
  const reps = context.quick ? 7 : 21;
  const rows: Row[] = [];
  const size = files.toLocaleString('en-US');
  context.log(`stage: command, ${size} files, ${reps} repetitions`);
  const command = await runStageInChild<StageResult>(SELF, { stage: 'command', files, reps, keep: context.keep }, 'scan benchmark stage command');
  const s = command.samples;
  const p50 = (name: string) => percentile(s[name]!, 50);
  rows.push(latencyRow(`${size} files: git status (the reference)`, reps, s.status!));
  rows.push(latencyRow(`${size} files: full checkpoint after a command`, reps, s.savepoint!));
  if (s.baseline) rows.push(latencyRow(`${size} files: the same, baseline build`, reps, s.baseline));
  rows.push(latencyRow(`${size} files: git's own: add -A into a private index + write-tree, fsynced`, reps, s.git!));
  const ratio = p50('savepoint') / p50('status');
  rows.push({ what: `${size} files: full checkpoint / git status, p50s`, value: `${ratio.toFixed(2)}x`, ...(context.quick ? {} : { target: `≤ ${TARGET_SCAN_RATIO}x`, ok: ratio <= TARGET_SCAN_RATIO }) });
  if (s.baseline) rows.push({ what: `${size} files: baseline build / git status, p50s`, value: `${(p50('baseline') / p50('status')).toFixed(2)}x` });
  rows.push({ what: `${size} files: git's own add -A + write-tree / git status, p50s`, value: `${(p50('git') / p50('status')).toFixed(2)}x` });

  const cloneFiles = context.quick ? 1000 : 4000;
  const cloneReps = context.quick ? 3 : 7;
  const clone = cloneFiles.toLocaleString('en-US');
  context.log(`stage: clone, ${clone} files, ${cloneReps} fresh clones`);
  const cloned = await runStageInChild<StageResult>(SELF, { stage: 'clone', files: cloneFiles, reps: cloneReps, keep: context.keep }, 'scan benchmark stage clone');
  const c = cloned.samples;
  const named = (what: string) => `fresh clone of ${clone} files: ${what}`;
  rows.push(latencyRow(named('git add -A into a scratch index from .git/index'), cloneReps, c.git!));
  rows.push(latencyRow(named("the same, the scratch index keeping .git/index's timestamp (racy-git check)"), cloneReps, c.gitKept!));
  rows.push(latencyRow(named('first checkpoint (a process of its own; the repository found first, as a run has it)'), cloneReps, c.savepoint!));
  if (c.baseline) rows.push(latencyRow(named('the same, baseline build'), cloneReps, c.baseline));
  rows.push(latencyRow(named('first checkpoint with finding the repository (git rev-parse)'), cloneReps, c.savepointFound!));
  if (c.baselineFound) rows.push(latencyRow(named('the same, baseline build'), cloneReps, c.baselineFound));
  const written = Math.max(...cloned.written!);
  rows.push({ what: named('objects the first checkpoint wrote (most of any clone)'), value: String(written), ...(context.quick ? {} : { target: '0', ok: written === 0 }) });
  const over = (a: number[], b: number[]) => percentile(a, 50) / percentile(b, 50);
  const cloneRatio = over(c.savepoint!, c.git!);
  rows.push({ what: named('first checkpoint / git add -A, p50s'), value: `${cloneRatio.toFixed(2)}x`, ...(context.quick ? {} : { target: `≤ ${TARGET_CLONE_RATIO}x`, ok: cloneRatio <= TARGET_CLONE_RATIO }) });
  if (c.baseline) rows.push({ what: named('baseline build / git add -A, p50s'), value: `${over(c.baseline, c.git!).toFixed(2)}x` });
  rows.push({ what: named('first checkpoint with finding the repository / git add -A, p50s'), value: `${over(c.savepointFound!, c.git!).toFixed(2)}x` });
  rows.push({ what: named("first checkpoint / git add -A keeping the index's timestamp, p50s"), value: `${over(c.savepoint!, c.gitKept!).toFixed(2)}x` });
  return rows;
}

export const scanGroup: BenchGroup = {
  name: 'scan',
  description: 'checkpoints on a 27,000-file tree beside git status, and the first one on a fresh clone beside git add -A',
  run,
};

if (process.argv[1] === SELF && process.argv.includes('--stage')) {
  const spec = JSON.parse(process.argv[process.argv.indexOf('--stage') + 1]!) as StageSpec;
  const result = spec.stage === 'command' ? await commandStage(spec) : await cloneStage(spec);
  process.stdout.write(JSON.stringify(result));
} else await runAlone(import.meta.url, run);
