// The journal benchmark: what `journal.step(...)` costs live, whether that stays flat as a run
// grows, how long a finished run takes to re-open and replay (loose and packed objects), what a
// plain JSONL append + fsync of the same bytes costs on this disk (the floor), and peak memory.
//
// It measures the built library (dist/, which `npm run bench` builds first): what users run. Each
// run is a stage in its own child process (this file, started with `--stage`), so that the memory
// numbers are the journal's and not what earlier stages left behind, and every stage starts from
// the same warmed-up state.
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { durableCommitFloor } from './commit-floor.js';
import {
  collectGarbage,
  createBenchRepo,
  createTempDir,
  latencyRow,
  megabytes,
  MemorySampler,
  now,
  percentile,
  runStageInChild,
  sum,
  type BenchContext,
  type BenchGroup,
  type BenchRepo,
  type Row,
} from './lib.js';

type Library = typeof import('../src/index.js');
type Journal = Awaited<ReturnType<Library['openJournal']>>;

const TARGET_APPEND_P50_MS = 1; // issue 13: "append p50 ≤ 1 ms, directory fsyncs included"
const TARGET_FLAT_RATIO = 1.3;
const TARGET_REPLAY_MS = 500;
const TARGET_PEAK_RSS_MB = 120;
const BIG = 10_000;

// BENCH_LIBRARY=<path to another build's index.js> measures that build instead (A/B comparisons).
async function loadLibrary(): Promise<Library> {
  const entry = process.env.BENCH_LIBRARY ? pathToFileURL(resolve(process.env.BENCH_LIBRARY)).href : new URL('../dist/index.js', import.meta.url).href;
  return (await import(entry)) as Library;
}

// ── The workload: a run_bash-like step with a ~1.5 KB result, deterministic per position ────────

interface BashInput {
  command: string;
  cwd: string;
  timeoutMs: number;
}

interface BashResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
}

function bashInput(i: number): BashInput {
  return { command: `npm test -- --grep "case ${i}"`, cwd: '.', timeoutMs: 120_000 };
}

function bashResult(i: number): BashResult {
  const failed = i % 5 === 0;
  const lines = [`> savepoint@0.1.0 test`, `> node scripts/run-tests.js --grep "case ${i}"`, ''];
  for (let k = 0; lines.join('\n').length < 1300; k++) {
    lines.push(`  ✔ suite ${(i + k) % 17} › handles case ${i}.${k} with input ${((i * 31 + k * 7) % 997).toString(16)} (${(i * 7 + k * 13) % 90} ms)`);
  }
  lines.push('', `ℹ tests ${lines.length}`, `ℹ pass ${failed ? lines.length - 1 : lines.length}`, `ℹ fail ${failed ? 1 : 0}`);
  return {
    exitCode: failed ? 1 : 0,
    stdout: `${lines.join('\n')}\n`,
    stderr: failed ? `AssertionError [ERR_ASSERTION]: expected ${i} to equal ${i + 1}\n    at test/case-${i}.test.ts:12:5\n` : '',
    durationMs: 800 + ((i * 37) % 900),
    truncated: false,
  };
}

function stepOptions(input: BashInput, intent: boolean) {
  return {
    intent,
    describe: `run_bash "${input.command}"`,
    summarize: (r: BashResult) => (r.exitCode === 0 ? 'exit 0: all passed' : `exit ${r.exitCode}: 1 failed`),
  };
}

// The same bytes the journal stores for step `i` (entries are pretty-printed JSON), for the floor.
function entryBytes(i: number): number {
  const input = bashInput(i);
  const entry = {
    format: 'savepoint/entry@1',
    run: 'bench-10000',
    step: i,
    kind: 'run_bash',
    phase: 'result',
    key: 'run_bash:0123456789abcdef',
    description: `run_bash "${input.command}"`,
    input,
    startedAt: new Date().toISOString(),
    attempt: 1,
    result: bashResult(i),
    summary: 'exit 0: all passed',
    finishedAt: new Date().toISOString(),
    durationMs: 0,
  };
  return Buffer.byteLength(`${JSON.stringify(entry, null, 2)}\n`);
}

// ── Live and replay ─────────────────────────────────────────────────────────────────────────────

interface LiveRun {
  latencies: number[];
  totalMs: number;
}

interface LiveOptions {
  intent?: boolean;
  sampler?: MemorySampler | undefined;
  // Runs after each step, outside its timing (the interleaved 100-step runs).
  between?: ((position: number) => Promise<void>) | undefined;
}

async function live(lib: Library, repo: BenchRepo, run: string, n: number, options: LiveOptions = {}): Promise<LiveRun> {
  const journal = await lib.openJournal({ dir: repo.root, run, task: `benchmark run of ${n} steps`, model: 'bench-model' });
  const latencies: number[] = [];
  try {
    for (let i = 1; i <= n; i++) {
      const input = bashInput(i);
      const result = bashResult(i); // built outside the timed region: the effect itself is free
      const t0 = now();
      await journal.step('run_bash', input, () => result, stepOptions(input, options.intent ?? false));
      latencies.push(now() - t0);
      if (options.sampler && i % 50 === 0) options.sampler.sample();
      await options.between?.(i);
    }
    await journal.finish('finished', { final: 'done' });
    if (journal.stats.live !== n || journal.stats.replayed !== 0) throw new Error(`live run ${run}: expected ${n} live steps, got ${JSON.stringify(journal.stats)}`);
    return { latencies, totalMs: sum(latencies) };
  } finally {
    journal.close();
  }
}

// 100-step runs advanced one step after every step of a long run, in a repository of their own
// created alongside the long run's (a new run every 100 steps): the short runs and the long one
// meet the same disk at the same moments in repositories of the same age, so comparing them shows
// what the long run's length costs, whatever else the machine is doing meanwhile. (A brand-new
// repository per short run would not do: appends into a just-created repository measured slower.)
class InterleavedRuns {
  readonly samples: Array<{ at: number; ms: number }> = [];
  private readonly repo: BenchRepo;
  private current: { journal: Journal; step: number } | undefined;
  private runs = 0;

  constructor(
    private readonly lib: Library,
    context: Pick<BenchContext, 'keep' | 'log'>,
  ) {
    this.repo = createBenchRepo(context, 'short', { fanout: true });
  }

  async step(at: number): Promise<void> {
    if (!this.current || this.current.step === 100) {
      await this.finishRun();
      const journal = await this.lib.openJournal({ dir: this.repo.root, run: `short-${++this.runs}`, task: 'benchmark run of 100 steps' });
      this.current = { journal, step: 0 };
    }
    const position = ++this.current.step;
    const input = bashInput(position);
    const result = bashResult(position);
    const t0 = now();
    await this.current.journal.step('run_bash', input, () => result, stepOptions(input, false));
    this.samples.push({ at, ms: now() - t0 });
  }

  private async finishRun(): Promise<void> {
    if (!this.current) return;
    await this.current.journal.finish('finished', { final: 'done' });
    this.current.journal.close();
    this.current = undefined;
  }

  async close(): Promise<void> {
    await this.finishRun();
    this.repo.remove();
  }
}

interface Replay {
  openMs: number;
  stepLatencies: number[];
  // open + every step
  totalMs: number;
}

async function replay(lib: Library, repo: BenchRepo, run: string, n: number, sampler?: MemorySampler): Promise<Replay> {
  const tipBefore = repo.git('rev-parse', 'refs/heads/agent-journal').trim();
  let calledLive = 0;
  const started = now();
  const journal: Journal = await lib.openJournal({ dir: repo.root, run });
  const openMs = now() - started;
  sampler?.sample();
  const stepLatencies: number[] = [];
  try {
    for (let i = 1; i <= n; i++) {
      const input = bashInput(i);
      const t0 = now();
      const result = await journal.step<BashResult>(
        'run_bash',
        input,
        () => {
          calledLive++;
          throw new Error(`replay of ${run} ran step ${i} live`);
        },
        stepOptions(input, false),
      );
      stepLatencies.push(now() - t0);
      if (result.durationMs !== 800 + ((i * 37) % 900)) throw new Error(`replay of ${run} returned the wrong result at step ${i}`);
      if (sampler && i % 500 === 0) sampler.sample();
    }
    const totalMs = now() - started;
    if (calledLive !== 0) throw new Error(`replay of ${run} called the step function ${calledLive} times`);
    if (journal.stats.replayed !== n || journal.stats.live !== 0) throw new Error(`replay of ${run}: expected ${n} replayed steps, got ${JSON.stringify(journal.stats)}`);
    const tipAfter = repo.git('rev-parse', 'refs/heads/agent-journal').trim();
    if (tipAfter !== tipBefore) throw new Error(`replay of ${run} moved the branch`);
    return { openMs, stepLatencies, totalMs };
  } finally {
    journal.close();
  }
}

function replayRows(label: string, n: number, result: Replay, checked: boolean): Row[] {
  const target = checked ? `≤ ${TARGET_REPLAY_MS / 1000} s total` : undefined;
  return [
    { what: `${label}: open (read + validate all)`, n, total: result.openMs },
    latencyRow(`${label}: open + replay every step`, n, result.stepLatencies, {
      total: result.totalMs,
      ...(target ? { target, ok: result.totalMs <= TARGET_REPLAY_MS } : {}),
    }),
  ];
}

function appendRows(label: string, n: number, latencies: number[], totalMs: number): Row[] {
  const target = `p50 ≤ ${TARGET_APPEND_P50_MS} ms`;
  const check = (samples: number[]) => ({ target, ok: percentile(samples, 50) <= TARGET_APPEND_P50_MS });
  const first = latencies.slice(0, 100);
  const last = latencies.slice(-100);
  const rows = [latencyRow(`${label}: steps 1–${first.length}`, n, first, check(first))];
  if (n > 100) {
    rows.push(latencyRow(`${label}: steps ${n - 99}–${n}`, n, last, check(last)));
    rows.push(latencyRow(`${label}: all steps`, n, latencies, { ...check(latencies), total: totalMs }));
  }
  return rows;
}

// p50 of each tenth of a run, for the progress log: shows a drift that first/last might hide.
function segments(latencies: number[]): string {
  const size = Math.ceil(latencies.length / 10);
  const parts: string[] = [];
  for (let at = 0; at < latencies.length; at += size) parts.push(percentile(latencies.slice(at, at + size), 50).toFixed(2));
  return parts.join(' ');
}

// ── The floor ───────────────────────────────────────────────────────────────────────────────────

function floor(context: BenchContext, n: number): { latencies: number[]; bytes: number } {
  const temp = createTempDir(context, 'floor');
  const bytes = entryBytes(n);
  const latencies: number[] = [];
  try {
    const fd = openSync(join(temp.dir, 'journal.jsonl'), 'a');
    try {
      for (let i = 1; i <= n; i++) {
        const line = `${JSON.stringify({ step: i, input: bashInput(i), result: bashResult(i) })}`;
        const record = Buffer.from(`${line.padEnd(bytes - 1)}\n`);
        const t0 = now();
        writeSync(fd, record);
        fsyncSync(fd);
        latencies.push(now() - t0);
      }
    } finally {
      closeSync(fd);
    }
  } finally {
    temp.remove();
  }
  return { latencies, bytes };
}

// ── A stage: one run, its replays and its memory, in a child process ────────────────────────────

interface StageSpec {
  label: string;
  n: number;
  intent: boolean;
  // Create all objects/xx directories first (a repository with history).
  fanout: boolean;
  // Replay the finished run (and again after `git gc` when `packed`).
  replay: boolean;
  packed: boolean;
  // Interleave 100-step runs with this one (see InterleavedRuns).
  interleave: boolean;
  // Replay again in a plain node process (replayInPlainNode), before and after the gc.
  plain?: boolean;
  keep: boolean;
}

interface MemoryPeak {
  rss: number;
  heapUsed: number;
}

interface StageResult {
  interleaved?: Array<{ at: number; ms: number }>;
  // RSS of this process with the library loaded, before any work (after a gc).
  startRss: number;
  live: LiveRun;
  replay?: Replay;
  gc?: { ms: number; loose: string };
  packed?: Replay;
  // The same replays in a plain node process (the largest stage only).
  plain?: { loose: PlainReplay; packed?: PlainReplay };
  memory: { baseline: MemoryPeak; live: MemoryPeak; replay?: MemoryPeak; packed?: MemoryPeak };
}

const peakOf = (sampler: MemorySampler): MemoryPeak => {
  sampler.stop();
  return { rss: sampler.peakRss, heapUsed: sampler.peakHeapUsed };
};

async function runStage(spec: StageSpec): Promise<StageResult> {
  const lib = await loadLibrary();
  collectGarbage();
  const startRss = process.memoryUsage().rss;
  const context = { keep: spec.keep, log: (m: string) => console.error(m) };
  // Warm up the JIT and the page cache on a throwaway run, so "the first 100 steps" measures the
  // journal at steps 1..100, not V8 compiling it.
  {
    const repo = createBenchRepo(context, 'warmup', { fanout: true });
    await live(lib, repo, 'warmup', 300, { intent: spec.intent });
    await replay(lib, repo, 'warmup', 300);
    repo.remove();
  }
  collectGarbage();
  const base = new MemorySampler().stop();
  const repo = createBenchRepo(context, spec.label, { fanout: spec.fanout });
  const run = `bench-${spec.n}`;
  try {
    const liveMemory = new MemorySampler();
    const short = spec.interleave ? new InterleavedRuns(lib, context) : undefined;
    const liveRun = await live(lib, repo, run, spec.n, { intent: spec.intent, sampler: liveMemory, between: short && ((at) => short.step(at)) });
    await short?.close();
    const result: StageResult = {
      startRss,
      ...(short ? { interleaved: short.samples } : {}),
      live: liveRun,
      memory: { baseline: { rss: base.peakRss, heapUsed: base.peakHeapUsed }, live: peakOf(liveMemory) },
    };
    if (spec.replay) {
      collectGarbage();
      const memory = new MemorySampler();
      result.replay = await replay(lib, repo, run, spec.n, memory);
      result.memory.replay = peakOf(memory);
      if (spec.plain) result.plain = { loose: replayInPlainNode(repo, run, spec.n) };
    }
    if (spec.packed) {
      const started = now();
      repo.git('gc', '-q');
      const ms = now() - started;
      result.gc = { ms, loose: repo.git('count-objects', '-v').match(/^count: (\d+)$/m)?.[1] ?? '?' };
      collectGarbage();
      const memory = new MemorySampler();
      result.packed = await replay(lib, repo, run, spec.n, memory);
      result.memory.packed = peakOf(memory);
      if (spec.plain && result.plain) result.plain.packed = replayInPlainNode(repo, run, spec.n);
    }
    return result;
  } finally {
    repo.remove();
  }
}

const SELF = fileURLToPath(import.meta.url);

// RSS of a plain `node` process with the library loaded (after a gc). The stages run under tsx,
// whose loader (a hooks thread, esbuild's caches) adds some 20 MB that a savepoint process, plain
// node on dist/, does not have: the difference is taken off the peaks before they meet the target.
function plainNodeRss(): number | undefined {
  const entry = process.env.BENCH_LIBRARY ? pathToFileURL(resolve(process.env.BENCH_LIBRARY)).href : new URL('../dist/index.js', import.meta.url).href;
  const script = `await import(${JSON.stringify(entry)}); gc(); gc(); process.stdout.write(String(process.memoryUsage().rss));`;
  const result = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const rss = Number(result.stdout);
  return result.status === 0 && rss > 0 ? rss : undefined;
}

// The replay of `run` in a plain `node` process on dist/ (no tsx, nothing run before it): what a
// library user's process costs. Its peak RSS is the kernel's high-water mark (maxrss), so nothing
// is subtracted. The step inputs and the check of each result follow bashInput / bashResult. Then
// one step runs live, as when a long run resumes (its peak RSS is taken before it); the branch is
// put back afterwards, so the run replays the same again.
interface PlainReplay {
  openMs: number;
  totalMs: number;
  maxRss: number;
  heapUsed: number;
  // One live step after the replay (PLAIN_REPLAY only).
  firstLiveMs?: number;
}

const PLAIN_REPLAY = `
const [entry, dir, run, n] = process.argv.slice(1);
const lib = await import(entry);
let heapUsed = 0;
const sample = () => (heapUsed = Math.max(heapUsed, process.memoryUsage().heapUsed));
const timer = setInterval(sample, 5);
const started = performance.now();
const journal = await lib.openJournal({ dir, run });
const openMs = performance.now() - started;
sample();
for (let i = 1; i <= Number(n); i++) {
  const input = { command: 'npm test -- --grep "case ' + i + '"', cwd: '.', timeoutMs: 120000 };
  const result = await journal.step('run_bash', input, () => { throw new Error('replay ran step ' + i + ' live'); }, { describe: 'run_bash "' + input.command + '"' });
  if (result.durationMs !== 800 + ((i * 37) % 900)) throw new Error('replay returned the wrong result at step ' + i);
  if (i % 500 === 0) sample();
}
const totalMs = performance.now() - started;
clearInterval(timer);
sample();
const maxRss = process.resourceUsage().maxRSS * 1024;
// Then one step live, as a resumed run's first (the caller puts the branch back).
const live = performance.now();
await journal.step('run_bash', { command: 'echo first live step' }, () => ({ exitCode: 0, stdout: 'first live step\\n', stderr: '', durationMs: 1, truncated: false }));
const firstLiveMs = performance.now() - live;
journal.close();
process.stdout.write(JSON.stringify({ openMs, totalMs, maxRss, heapUsed, firstLiveMs }));
`;

function replayInPlainNode(repo: BenchRepo, run: string, n: number): PlainReplay {
  const entry = process.env.BENCH_LIBRARY ? pathToFileURL(resolve(process.env.BENCH_LIBRARY)).href : new URL('../dist/index.js', import.meta.url).href;
  const tip = repo.git('rev-parse', 'refs/heads/agent-journal').trim();
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', PLAIN_REPLAY, entry, repo.root, run, String(n)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the plain-node replay of ${run} failed:\n${result.stderr}`);
  repo.git('update-ref', 'refs/heads/agent-journal', tip); // without the live step
  return JSON.parse(result.stdout) as PlainReplay;
}

// ── Big outputs: a replay holds one at a time ───────────────────────────────────────────────────

const BIG_OUTPUT_BYTES = 256 * 1024;

// A run_bash output of BIG_OUTPUT_BYTES with characters outside Latin-1 (a parsed one takes two
// bytes a character), ending with a line that names its step.
function bigOutput(i: number): string {
  const line = (k: number) => `  ✔ suite ${(i + k) % 17} › case ${i}.${k} │ ${((i * 31 + k * 7) % 997).toString(16).padStart(3, '0')} (${(i * 7 + k * 13) % 90} ms)\n`;
  const lines: string[] = [];
  for (let k = 0, size = 0; size < BIG_OUTPUT_BYTES; k++) size += (lines[k] = line(k)).length;
  return `${lines.join('')}end of step ${i}\n`;
}

const PLAIN_BIG_REPLAY = `
const [entry, dir, run, n] = process.argv.slice(1);
const lib = await import(entry);
let heapUsed = 0;
const sample = () => (heapUsed = Math.max(heapUsed, process.memoryUsage().heapUsed));
const started = performance.now();
const journal = await lib.openJournal({ dir, run });
sample();
for (let i = 1; i <= Number(n); i++) {
  const result = await journal.step('run_bash', { command: 'make big ' + i }, () => { throw new Error('replay ran step ' + i + ' live'); });
  if (!result.stdout.endsWith('end of step ' + i + '\\n') || result.stdout.length < ${BIG_OUTPUT_BYTES}) throw new Error('replay returned the wrong output at step ' + i);
  sample();
}
const totalMs = performance.now() - started;
journal.close();
process.stdout.write(JSON.stringify({ openMs: 0, totalMs, maxRss: process.resourceUsage().maxRSS * 1024, heapUsed }));
`;

// A run of `n` run_bash steps with BIG_OUTPUT_BYTES outputs each, replayed in a plain node process:
// the outputs together are far over the memory target, so a replay that held them all would miss it.
async function bigOutputs(context: BenchContext, n: number): Promise<Row[]> {
  const lib = await loadLibrary();
  const repo = createBenchRepo(context, 'big-outputs', { fanout: true });
  const run = `big-${n}`;
  try {
    const journal = await lib.openJournal({ dir: repo.root, run, task: `benchmark run of ${n} big outputs` });
    for (let i = 1; i <= n; i++) {
      const result = { exitCode: 0, stdout: bigOutput(i), stderr: '', durationMs: 1000, truncated: false };
      await journal.step('run_bash', { command: `make big ${i}` }, () => result, { intent: true });
    }
    await journal.finish('finished', { final: 'done' });
    await journal.store.objects.rollup.settle(); // a roll-up still writing would race the repository's removal
    journal.close();
    const entry = process.env.BENCH_LIBRARY ? pathToFileURL(resolve(process.env.BENCH_LIBRARY)).href : new URL('../dist/index.js', import.meta.url).href;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', PLAIN_BIG_REPLAY, entry, repo.root, run, String(n)], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`the plain-node replay of ${run} failed:\n${child.stderr}`);
    const plain = JSON.parse(child.stdout) as PlainReplay;
    const outputs = `${n} × ${BIG_OUTPUT_BYTES / 1024} KB outputs (${((n * BIG_OUTPUT_BYTES) / 1024 / 1024).toFixed(0)} MB)`;
    const rss = megabytes(plain.maxRss);
    return [
      { what: `replay ${n}-step run of ${outputs}, plain node: open + replay every step`, n, total: plain.totalMs },
      {
        what: `peak RSS (maxrss) / heap used, plain node replaying ${outputs}`,
        n,
        value: `${rss.toFixed(0)} / ${megabytes(plain.heapUsed).toFixed(0)} MB`,
        ...(context.quick ? {} : { target: `RSS ≤ ${TARGET_PEAK_RSS_MB} MB`, ok: rss <= TARGET_PEAK_RSS_MB }),
      },
    ];
  } finally {
    repo.remove();
  }
}

// Runs a stage in a fresh process with this process's flags (--expose-gc, --import tsx).
function stageInChild(spec: StageSpec): Promise<StageResult> {
  return runStageInChild<StageResult>(SELF, spec, `benchmark stage ${spec.label}`);
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────

async function run(context: BenchContext): Promise<Row[]> {
  const sizes = context.quick ? [100, 1000] : [100, 1000, BIG];
  const largest = sizes[sizes.length - 1]!;
  const intentSteps = context.quick ? 200 : 1000;
  const rows: Row[] = [];
  const stage = (spec: Omit<StageSpec, 'keep' | 'label' | 'interleave'> & { label?: string; interleave?: boolean }) =>
    stageInChild({ label: spec.label ?? `n${spec.n}`, keep: context.keep, interleave: false, ...spec });

  const floorN = context.quick ? 1000 : BIG;
  context.log(`floor: ${floorN} JSONL appends + fsync`);
  collectGarbage();
  const plain = floor(context, floorN);
  rows.push(latencyRow(`floor: JSONL write+fsync, ${(plain.bytes / 1024).toFixed(1)} KB/record`, floorN, plain.latencies));
  const commitFloorN = context.quick ? 300 : 1000;
  context.log(`floor: ${commitFloorN} durable commits' file operations`);
  const commits = await durableCommitFloor(context, commitFloorN);
  rows.push(latencyRow("floor: one append's file operations alone (3 files fsynced, 3 renames, 2 directory fsyncs)", commitFloorN, commits));

  // Stages in an order that leaves the 10,000-step one, which ends with a `git gc` (70,000 loose
  // objects deleted), for last; their rows are listed afterwards.
  const later: Row[] = [];
  context.log('stage: 100 steps in a brand-new repository');
  const fresh = await stage({ label: 'fresh', n: 100, intent: false, fanout: false, replay: false, packed: false });
  later.push(latencyRow('append run_bash, 100-step run, brand-new repo (creates objects/xx)', 100, fresh.live.latencies, { total: fresh.live.totalMs }));

  context.log(`stage: ${intentSteps} steps with intent (2 commits each)`);
  const intent = await stage({ label: 'intent', n: intentSteps, intent: true, fanout: true, replay: true, packed: false });
  later.push(
    latencyRow(`append intent + result (2 commits/step), ${intentSteps.toLocaleString('en-US')}-step run`, intentSteps, intent.live.latencies, {
      total: intent.live.totalMs,
    }),
  );
  if (intent.replay) later.push(...replayRows(`replay ${intentSteps.toLocaleString('en-US')}-step intent run`, intentSteps, intent.replay, false));

  const p50: Record<number, { all: number; first: number; last: number }> = {};
  let interleaved: { all: number; lastWindow: number; lastRun: number } | undefined;
  for (const n of sizes) {
    context.log(`stage: ${n} steps live${n === largest ? ' (100-step runs interleaved)' : ''}, replay${n === largest ? ', git gc, replay' : ''}`);
    const result = await stage({ n, intent: false, fanout: true, replay: true, packed: n === largest, interleave: n === largest, plain: n === largest });
    const size = n.toLocaleString('en-US');
    context.log(`  live total ${(result.live.totalMs / 1000).toFixed(2)} s; p50 by tenth of the run (ms): ${segments(result.live.latencies)}`);
    rows.push(...appendRows(`append run_bash, ${size}-step run`, n, result.live.latencies, result.live.totalMs));
    const lat = result.live.latencies;
    p50[n] = { all: percentile(lat, 50), first: percentile(lat.slice(0, 100), 50), last: percentile(lat.slice(-100), 50) };
    if (result.interleaved) {
      const ms = result.interleaved.map((s) => s.ms);
      const window = result.interleaved.filter((s) => s.at > n - 1000).map((s) => s.ms);
      rows.push(latencyRow(`append run_bash, 100-step runs interleaved with it (own repo)`, ms.length, ms, {
        target: `p50 ≤ ${TARGET_APPEND_P50_MS} ms`,
        ok: percentile(ms, 50) <= TARGET_APPEND_P50_MS,
      }));
      interleaved = { all: percentile(ms, 50), lastWindow: percentile(window, 50), lastRun: percentile(lat.slice(-1000), 50) };
    }
    if (result.replay) rows.push(...replayRows(`replay ${size}-step run`, n, result.replay, n === BIG));
    if (result.gc) rows.push({ what: `git gc of the ${size}-step journal (${result.gc.loose} loose left)`, n, total: result.gc.ms });
    if (result.packed) rows.push(...replayRows(`replay ${size}-step run after git gc`, n, result.packed, n === BIG));
    for (const [phase, plain] of [['', result.plain?.loose], [' after git gc', result.plain?.packed]] as const) {
      if (!plain) continue;
      const target = n === BIG ? { target: `≤ ${TARGET_REPLAY_MS / 1000} s total`, ok: plain.totalMs <= TARGET_REPLAY_MS } : {};
      rows.push({ what: `replay ${size}-step run${phase}, plain node (no tsx): open + replay every step`, n, total: plain.totalMs, ...target });
      if (plain.firstLiveMs !== undefined) rows.push({ what: `  then its first live step, plain node`, n, total: plain.firstLiveMs });
      const rss = megabytes(plain.maxRss);
      rows.push({
        what: `peak RSS (maxrss) / heap used, plain node replaying ${size} steps${phase}`,
        n,
        value: `${rss.toFixed(0)} / ${megabytes(plain.heapUsed).toFixed(0)} MB`,
        ...(n === BIG ? { target: `RSS ≤ ${TARGET_PEAK_RSS_MB} MB`, ok: rss <= TARGET_PEAK_RSS_MB } : {}),
      });
    }
    if (n === largest) {
      const { baseline, live: during, replay: replaying, packed } = result.memory;
      const plain = plainNodeRss();
      const loader = plain === undefined ? 0 : Math.max(0, result.startRss - plain);
      const phases: Array<[string, MemoryPeak | undefined]> = [
        ['live run', during],
        ['replay', replaying],
        ['replay after gc', packed],
      ];
      context.log(
        `  memory: start ${megabytes(result.startRss).toFixed(0)} MB with tsx, ${plain === undefined ? '?' : megabytes(plain).toFixed(0)} MB as plain node; ` +
          `after warm-up ${megabytes(baseline.rss).toFixed(0)} MB, heap used ${megabytes(baseline.heapUsed).toFixed(0)} MB`,
      );
      for (const [phase, peak] of phases) {
        if (!peak) continue;
        const rss = megabytes(peak.rss - loader);
        rows.push({
          what: `peak RSS / heap used, ${phase} (RSS less ${megabytes(loader).toFixed(0)} MB of tsx loader)`,
          n,
          value: `${rss.toFixed(0)} / ${megabytes(peak.heapUsed).toFixed(0)} MB`,
          ...(n === BIG ? { target: `RSS ≤ ${TARGET_PEAK_RSS_MB} MB`, ok: rss <= TARGET_PEAK_RSS_MB } : {}),
        });
      }
    }
  }

  // Flatness: does an append cost the same at step 10,000 as in a 100-step run? Judged against the
  // 100-step runs interleaved with the long one (same moments, same disk load); the separately
  // run 100-step stage is shown for reference only, as the load on a shared machine drifts.
  const big = p50[largest]!;
  const flat: Array<[string, number, boolean]> = [];
  if (interleaved) {
    flat.push([`flat: ${largest.toLocaleString('en-US')}-step run p50 / interleaved 100-step runs p50`, big.all / interleaved.all, true]);
    flat.push([`flat: its last 1,000 steps p50 / interleaved 100-step runs p50, same window`, interleaved.lastRun / interleaved.lastWindow, true]);
  }
  flat.push([`flat, for reference: last 100 / first 100 steps of the same run`, big.last / big.first, false]);
  flat.push([`flat, for reference: p50 / the separate 100-step run's p50`, big.all / p50[100]!.all, false]);
  for (const [what, value, checked] of flat) {
    rows.push({
      what,
      n: largest,
      value: `${value.toFixed(2)}x`,
      ...(checked && largest === BIG ? { target: `≤ ${TARGET_FLAT_RATIO}x`, ok: value <= TARGET_FLAT_RATIO } : {}),
    });
  }

  const bigSteps = context.quick ? 50 : 200;
  context.log(`stage: ${bigSteps} steps of ${BIG_OUTPUT_BYTES / 1024} KB outputs, replayed in plain node`);
  rows.push(...(await bigOutputs(context, bigSteps)));

  rows.push(...later);
  return rows;
}

export const journalGroup: BenchGroup = {
  name: 'journal',
  description: 'journal.step append latency, replay, packed replay, JSONL+fsync floor, peak memory',
  run,
};

// Started as a stage: run it and print its result as JSON on stdout.
if (process.argv[1] && resolve(process.argv[1]) === SELF && process.argv[2] === '--stage') {
  const spec = JSON.parse(process.argv[3]!) as StageSpec;
  process.stdout.write(`${JSON.stringify(await runStage(spec))}\n`);
}
