// The hand-written parts of git under src/git/, each beside git's own command doing the same job
// in the same run, so that each one that stays is kept for a number a user would feel:
//   - an append (objects as one pack, ref compare-and-swap, reflog), against git's plumbing for one
//     commit of one file (hash-object, update-index into a private index, write-tree, commit-tree,
//     update-ref), made as durable as ours with core.fsync;
//   - the ref compare-and-swap alone, against `git update-ref <ref> <new> <old>`;
//   - reading a step file at the tip, against `git cat-file` (one spawn a read) and a long-lived
//     `git cat-file --batch`;
//   - a small roll-up copied together in this process, against `git pack-objects --stdin-packs`,
//     and how long the spawn alone stops the run's thread.
// Registered in bench/run.ts as the group `gitparts`; it also runs alone:
// `node --import tsx bench/git-parts.ts [--quick]`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { JournalStore } from '../src/journal/store.js';
import { compareAndSwapRef } from '../src/git/refs.js';
import { concatenatePacks } from '../src/git/pack-file.js';
import { tryRollupLock } from '../src/locks/rollup-lock.js';
import { createBenchRepo, latencyRow, now, percentile, runAlone, type BenchContext, type BenchGroup, type Row } from './lib.js';

const APPENDS = 200;
const QUICK_APPENDS = 50;
const ROLLUP_PACKS = 16;

// What one step of the other benches writes: a ~1.5 KB result.
const stepPath = (i: number) => `runs/r/steps/${String(Math.floor(i / 100)).padStart(3, '0')}/${String(i).padStart(6, '0')}-run_bash.json`;
const stepContent = (i: number) => `${JSON.stringify({ step: i, output: `exit 0\n${'a line of output\n'.repeat(90)}${i}` }, null, 2)}\n`;

// git made as durable as an append: objects and the ref fsynced (git 2.36+; older ones ignore it).
const DURABLE = ['-c', 'core.fsync=objects,reference', '-c', 'core.fsyncMethod=fsync'];

function git(root: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync('git', [...DURABLE, ...args], { cwd: root, input, encoding: 'utf8', env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

// One commit of one new file on `ref` with git's plumbing, as a git-based journal would make it.
function gitAppend(root: string, ref: string, index: string, i: number): void {
  const env = { GIT_INDEX_FILE: index };
  const blob = git(root, ['hash-object', '-w', '--stdin'], stepContent(i));
  git(root, ['update-index', '--add', '--cacheinfo', `100644,${blob},${stepPath(i)}`], undefined, env);
  const tree = git(root, ['write-tree'], undefined, env);
  const parent = spawnSync('git', ['rev-parse', '-q', '--verify', ref], { cwd: root, encoding: 'utf8' }).stdout.trim();
  const commit = git(root, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', `r #${i} run_bash`]);
  git(root, ['update-ref', '-m', `r #${i}`, ref, commit, ...(parent ? [parent] : [])]);
}

async function run(context: BenchContext): Promise<Row[]> {
  const n = context.quick ? QUICK_APPENDS : APPENDS;
  const rows: Row[] = [];
  const repo = createBenchRepo(context, 'gitparts', { fanout: true });
  try {
    context.log(`appends: ${n} through the journal, ${n} through git's plumbing`);
    const store = await JournalStore.open(repo.root);
    const ours: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = now();
      await store.append([{ path: stepPath(i), content: stepContent(i) }], `r #${i} run_bash`);
      ours.push(now() - started);
      await store.objects.rollup.settle();
    }
    const theirs: number[] = [];
    const index = join(repo.root, '.git', 'bench-index');
    for (let i = 0; i < n; i++) {
      const started = now();
      gitAppend(repo.root, 'refs/heads/git-journal', index, i);
      theirs.push(now() - started);
    }
    rows.push(latencyRow('append one step: the journal (pack + ref CAS + reflog, fsynced)', n, ours));
    rows.push(latencyRow('append one step: git plumbing (hash-object .. update-ref, core.fsync)', n, theirs, { value: `${percentile(theirs, 50).toFixed(2)} ms = ${(percentile(theirs, 50) / percentile(ours, 50)).toFixed(1)}x` }));

    context.log('ref compare-and-swap');
    const tip = git(repo.root, ['rev-parse', 'refs/heads/agent-journal']);
    const parent = git(repo.root, ['rev-parse', 'refs/heads/agent-journal~1']);
    const cas: number[] = [];
    const updateRef: number[] = [];
    for (let i = 0; i < n; i++) {
      const [from, to] = i % 2 ? [parent, tip] : [tip, parent];
      let started = now();
      if (!(await compareAndSwapRef(join(repo.root, '.git'), 'refs/heads/bench-cas', i === 0 ? undefined : from, to))) throw new Error('compare-and-swap lost');
      cas.push(now() - started);
      started = now();
      git(repo.root, ['update-ref', 'refs/heads/bench-update-ref', to, ...(i === 0 ? [] : [from])]);
      updateRef.push(now() - started);
    }
    rows.push(latencyRow('move a ref by compare-and-swap: refs.ts (fsynced)', n, cas));
    rows.push(latencyRow('move a ref: git update-ref <ref> <new> <old> (core.fsync)', n, updateRef, { value: `${percentile(updateRef, 50).toFixed(2)} ms = ${(percentile(updateRef, 50) / percentile(cas, 50)).toFixed(1)}x` }));

    context.log('reads of step files at the tip');
    const fresh = await JournalStore.open(repo.root);
    const reads: number[] = [];
    const spawned: number[] = [];
    for (let i = 0; i < n; i++) {
      let started = now();
      if (!(await fresh.fileAt(stepPath(i)))) throw new Error(`step ${i} missing`);
      reads.push(now() - started);
      started = now();
      git(repo.root, ['cat-file', 'blob', `agent-journal:${stepPath(i)}`]);
      spawned.push(now() - started);
    }
    const batch = await catFileBatch(repo.root, Array.from({ length: n }, (_, i) => `agent-journal:${stepPath(i)}`));
    rows.push(latencyRow('read a step file at the tip: pack-reader.ts (one store)', n, reads));
    rows.push(latencyRow('read a step file: git cat-file blob (a spawn a read)', n, spawned, { value: `${percentile(spawned, 50).toFixed(2)} ms = ${(percentile(spawned, 50) / percentile(reads, 50)).toFixed(0)}x` }));
    rows.push({ what: 'read a step file: git cat-file --batch (one process, mean a read)', n, value: `${(batch / n).toFixed(3)} ms`, total: batch });

    context.log(`a roll-up of ${ROLLUP_PACKS} append packs`);
    // A repository of its own whose roll-up lock this process holds: its appends' packs stay apart.
    const packed = createBenchRepo(context, 'gitparts-packs');
    const objectsDir = join(packed.root, '.git', 'objects');
    const lock = tryRollupLock(objectsDir);
    const packStore = await JournalStore.open(packed.root);
    for (let i = 0; i < ROLLUP_PACKS; i++) await packStore.append([{ path: stepPath(i), content: stepContent(i) }], `r #${i} run_bash`);
    lock?.release();
    const packDir = join(objectsDir, 'pack');
    const picked = readdirSync(packDir).filter((name) => name.endsWith('.idx')).map((name) => join(packDir, name.slice(0, -4)));
    let started = now();
    const copied = concatenatePacks(picked.map((base) => ({ pack: readFileSync(`${base}.pack`), idx: readFileSync(`${base}.idx`) })));
    const copyMs = now() - started;
    if (!copied) throw new Error('the packs could not be copied together');
    const work = mkdtempSync(join(objectsDir, 'tmp_bench_'));
    let spawnMs = 0;
    started = now();
    await new Promise<void>((resolve, reject) => {
      const before = now();
      const child = spawn('git', ['pack-objects', '-q', '--stdin-packs', '--threads=1', join(work, 'pack')], { cwd: packed.root, stdio: ['pipe', 'ignore', 'inherit'] });
      spawnMs = now() - before;
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`git pack-objects exited ${code}`))));
      child.stdin.end(picked.map((base) => `${base.slice(packDir.length + 1)}.pack\n`).join(''));
    });
    const gitMs = now() - started;
    rmSync(work, { recursive: true, force: true });
    rows.push({ what: `roll up ${ROLLUP_PACKS} append packs: copied together in this process`, n: copied.count, total: copyMs });
    rows.push({ what: `roll up ${ROLLUP_PACKS} append packs: git pack-objects --stdin-packs (wall)`, n: copied.count, total: gitMs, value: `${(gitMs / copyMs).toFixed(1)}x` });
    rows.push({ what: "the same: spawn() alone, the run's thread stopped", n: 1, total: spawnMs });
    packed.remove();
  } finally {
    repo.remove();
  }
  return rows;
}

// The whole time a long-lived `git cat-file --batch` takes to hand back `specs` (from spawn to the last one).
function catFileBatch(root: string, specs: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn('git', ['cat-file', '--batch'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdout.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(now() - started) : reject(new Error(`git cat-file exited ${code}`))));
    child.stdin.end(specs.map((spec) => `${spec}\n`).join(''));
  });
}

export const gitPartsGroup: BenchGroup = {
  name: 'gitparts',
  description: "the hand-written parts of git (append, ref compare-and-swap, pack reader, copy roll-up) beside git's own commands",
  run,
};

// Run alone: `node --import tsx bench/git-parts.ts [--quick]`.
await runAlone(import.meta.url, run);
