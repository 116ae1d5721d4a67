// Shared pieces of the benchmarks: what a group is, the result rows it reports, percentiles, a
// memory sampler, throwaway git repositories and the printed table. A benchmark group is a module
// exporting a `BenchGroup`; bench/run.ts registers it by name.
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath as fileURLToPathOf } from 'node:url';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

// ── The measured programs' environment ──────────────────────────────────────────────────────────
// This machine sets NODE_EXTRA_CA_CERTS to the system's certificate bundle, and Node 20 reads and
// parses the certificates it names in every process as it starts, before any JavaScript runs:
// `node -e 0` took 0.22 s with it and 0.04 s without. That is a cost of the machine, paid alike by
// every Node program (savepoint, pi), and none of the measured programs needs it: their model
// server is the bench's own, on local HTTP, with no TLS. So every program a bench starts runs
// without it. Children inherit this process's environment, so the variable is dropped from it
// here, as this module (which every group imports) loads; MACHINE_CA_CERTS keeps the machine's
// value for the one row that measures savepoint with it set (bench/session.ts), so that the cost
// is shown, not hidden. scripts/run-tests.js drops it for the tests the same way.

/** NODE_EXTRA_CA_CERTS as the machine set it when the bench started (undefined: not set). */
export const MACHINE_CA_CERTS: string | undefined = process.env.NODE_EXTRA_CA_CERTS;
delete process.env.NODE_EXTRA_CA_CERTS;

/** The line each table prints under its machine line: the environment its programs ran with. */
export function caCertsNote(): string {
  return MACHINE_CA_CERTS === undefined
    ? 'NODE_EXTRA_CA_CERTS: not set on this machine'
    : `NODE_EXTRA_CA_CERTS: unset for every program measured (the machine sets ${MACHINE_CA_CERTS}; the model server is local HTTP, no TLS)`;
}

export interface BenchContext {
  // `--quick`: smaller runs, for a fast look (targets on the full-size runs are then not checked).
  quick: boolean;
  // `--keep`: leave the temporary repositories on disk (their paths are printed).
  keep: boolean;
  // Progress for people, on stderr (stdout carries only the table).
  log(message: string): void;
}

export interface BenchGroup {
  name: string;
  description: string;
  run(context: BenchContext): Promise<Row[]>;
}

// One line of the table. Times are in milliseconds; `value` is for rows that are not timings.
export interface Row {
  what: string;
  n?: number;
  p50?: number;
  p99?: number;
  total?: number;
  // The same figure for pi, measured in the same run (ms), and ours / theirs: shown in the columns
  // `pi` and `ratio` of a table where some row has them.
  peer?: number;
  ratio?: number;
  value?: string;
  target?: string;
  // undefined: no target (information only).
  ok?: boolean;
}

// ── Timing ──────────────────────────────────────────────────────────────────────────────────────

export function now(): number {
  return performance.now();
}

// Nearest-rank percentile of `samples` (need not be sorted); NaN for none.
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function sum(samples: readonly number[]): number {
  return samples.reduce((a, b) => a + b, 0);
}

// A latency row for `samples`.
export function latencyRow(what: string, n: number, samples: readonly number[], extra: Partial<Row> = {}): Row {
  return { what, n, p50: percentile(samples, 50), p99: percentile(samples, 99), total: sum(samples), ...extra };
}

// ── Memory ──────────────────────────────────────────────────────────────────────────────────────

// Runs a full collection when the process was started with --expose-gc (npm run bench does).
export function collectGarbage(): void {
  if (globalThis.gc) {
    globalThis.gc();
    globalThis.gc();
  }
}

// Keeps the highest RSS and heap-used seen. Call `sample()` from inside the measured loop (outside
// the timed region): a tight loop of mostly synchronous I/O gives timers no chance to fire. A timer
// also samples every few milliseconds while the process does wait (reads through promises).
export class MemorySampler {
  peakRss = 0;
  peakHeapUsed = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 5) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    this.sample();
  }

  stop(): this {
    clearInterval(this.timer);
    this.sample();
    return this;
  }

  sample(): void {
    const { rss, heapUsed } = process.memoryUsage();
    if (rss > this.peakRss) this.peakRss = rss;
    if (heapUsed > this.peakHeapUsed) this.peakHeapUsed = heapUsed;
    this.samples++;
  }
}

export function megabytes(bytes: number): number {
  return bytes / (1024 * 1024);
}

// ── Throwaway repositories ──────────────────────────────────────────────────────────────────────
// Everything a bench run creates goes under one directory (BENCH_ROOT, made by bench/run.ts), and
// `remove()` leaves it there: the directory goes at the very end. Deleting thousands of files in
// the middle would slow every fsync after it (this disk is mounted with online discard: after an
// `rm -rf` of a 300-step journal, appends measured 5-6 ms instead of 2.6-3.9 ms for ~500 steps).
// Outside bench/run.ts (no BENCH_ROOT), `remove()` deletes at once.

function parentDir(): string {
  return process.env.BENCH_ROOT ?? process.env.BENCH_TMPDIR ?? tmpdir();
}

// Makes the directory a bench run works in; bench/run.ts removes it when the run ends.
export function createBenchRoot(): string {
  return realpathSync(mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'savepoint-bench-')));
}

function releaser(context: Pick<BenchContext, 'keep' | 'log'>, dir: string): () => void {
  return () => {
    if (context.keep) context.log(`  kept ${dir}`);
    else if (!process.env.BENCH_ROOT) rmSync(dir, { recursive: true, force: true });
  };
}

export interface BenchRepo {
  root: string;
  git(...args: string[]): string;
  remove(): void;
}

// A fresh repository with one commit. With `fanout`, all 256 `objects/xx` directories exist up
// front, as in any repository with some history; a brand-new repository creates them as the first
// objects land, which costs the first steps extra.
export function createBenchRepo(context: Pick<BenchContext, 'keep' | 'log'>, label: string, options: { fanout?: boolean } = {}): BenchRepo {
  const root = realpathSync(mkdtempSync(join(parentDir(), `${label}-`)));
  const git = (...args: string[]): string => {
    const result = spawnSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${root}: ${result.stderr || result.error?.message}`);
    return result.stdout;
  };
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Savepoint Bench');
  git('config', 'user.email', 'bench@savepoint.invalid');
  git('config', 'commit.gpgsign', 'false');
  git('config', 'gc.auto', '0'); // no background gc in the middle of a measurement
  writeFileSync(join(root, 'README.md'), '# bench\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  if (options.fanout) {
    for (let i = 0; i < 256; i++) mkdirSync(join(root, '.git', 'objects', i.toString(16).padStart(2, '0')), { recursive: true });
  }
  return { root, git, remove: releaser(context, root) };
}

// A temporary directory (for the non-git floor measurement).
export function createTempDir(context: Pick<BenchContext, 'keep' | 'log'>, label: string): { dir: string; remove(): void } {
  const dir = realpathSync(mkdtempSync(join(parentDir(), `${label}-`)));
  return { dir, remove: releaser(context, dir) };
}

// ── Disk ────────────────────────────────────────────────────────────────────────────────────────

/** What a repository's `.git` takes: every file's size added up, and how many packs and loose objects it holds. */
export interface GitDirSize {
  bytes: number;
  packs: number;
  loose: number;
}

/** The size of the `.git` directory `gitDir` (apparent sizes: what a copy or a clone of it would carry). */
export function gitDirSize(gitDir: string): GitDirSize {
  const size: GitDirSize = { bytes: 0, packs: 0, loose: 0 };
  const walk = (dir: string, depth: number, inObjects: boolean): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1, inObjects || (depth === 0 && entry.name === 'objects'));
      else if (entry.isFile()) {
        size.bytes += statSync(path).size;
        if (inObjects && entry.name.endsWith('.pack')) size.packs++;
        else if (inObjects && depth === 2 && /^[0-9a-f]{38}$/.test(entry.name)) size.loose++;
      }
    }
  };
  walk(gitDir, 0, false);
  return size;
}

/**
 * The size of a copy of `root`'s `.git` after `git repack -a -d -f` (every object deltified afresh
 * with git's defaults, unreachable ones dropped), the reference a journal's own roll-ups are held to;
 * with the time git took.
 */
export function repackedCopySize(context: Pick<BenchContext, 'keep' | 'log'>, root: string, label: string): GitDirSize & { ms: number } {
  const copy = createTempDir(context, label);
  try {
    const gitDir = join(copy.dir, '.git');
    cpSync(join(root, '.git'), gitDir, { recursive: true });
    const started = now();
    const result = spawnSync('git', [`--git-dir=${gitDir}`, 'repack', '-q', '-a', '-d', '-f'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = now() - started;
    if (result.status !== 0) throw new Error(`git repack -a -d -f failed in ${gitDir}: ${result.stderr || result.error?.message}`);
    return { ...gitDirSize(gitDir), ms };
  } finally {
    copy.remove();
  }
}

// ── Stages in child processes ───────────────────────────────────────────────────────────────────

// Runs `script --stage <spec as JSON>` in a fresh node with this process's flags (--expose-gc,
// --import tsx) and parses the JSON it prints: each stage starts with its own heap and caches, so
// its times and memory peak are its own. `what` names the stage in the error when it fails.
export function runStageInChild<Result>(script: string, spec: unknown, what: string): Promise<Result> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script, '--stage', JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${what} exited with ${code}`));
      try {
        resolvePromise(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Result);
      } catch (error) {
        reject(error);
      }
    });
  });
}

// ── The table ───────────────────────────────────────────────────────────────────────────────────

function ms(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '';
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 1) return `${value.toFixed(2)} ms`;
  return `${(value * 1000).toFixed(1)} µs`;
}

export function formatTable(rows: readonly Row[]): string {
  const peers = rows.some((row) => row.peer !== undefined || row.ratio !== undefined);
  const header = ['what', 'N', 'p50', 'p99', 'total', ...(peers ? ['pi', 'ratio'] : []), 'target', 'ok?'];
  const cells = rows.map((row) => [
    row.what,
    row.n === undefined ? '' : row.n.toLocaleString('en-US'),
    row.value ?? ms(row.p50),
    row.value === undefined ? ms(row.p99) : '',
    ms(row.total),
    ...(peers ? [ms(row.peer), row.ratio === undefined || Number.isNaN(row.ratio) ? '' : `${row.ratio.toFixed(2)}x`] : []),
    row.target ?? '',
    row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const right = new Set([1, 2, 3, 4, ...(peers ? [5, 6] : [])]);
  const line = (values: string[]) =>
    values.map((v, i) => (right.has(i) ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Runs `run` as a script when `moduleUrl` is the file node was started with: `node --import tsx bench/<group>.ts [--quick] [--keep]`. */
export async function runAlone(moduleUrl: string, run: BenchGroup['run']): Promise<void> {
  if (!process.argv[1] || resolvePath(process.argv[1]) !== fileURLToPathOf(moduleUrl)) return;
  const flags = process.argv.slice(2);
  const rows = await run({ quick: flags.includes('--quick'), keep: flags.includes('--keep'), log: (m) => console.error(m) });
  console.log(`${caCertsNote()}\n`);
  console.log(formatTable(rows));
  process.exitCode = rows.some((r) => r.ok === false) ? 1 : 0;
}

/**
 * A peer harness's package installed with npm into the bench's cache folder (once; never a
 * dependency of savepoint): the path of its `entry` file, or why it could not be had. `works`
 * says whether an installed copy runs (default: its entry file exists).
 */
export function installInCache(
  log: (message: string) => void,
  peer: { pkg: string; version: string; folder: string; entry: string[]; timeoutMs: number; failed: (why: string) => string; works?: (cli: string) => boolean },
): { cli: string } | { skipped: string } {
  const cache = process.env.SAVEPOINT_BENCH_CACHE ?? join(homedir(), '.cache', 'savepoint-bench');
  const prefix = join(cache, peer.folder);
  const cli = join(prefix, 'node_modules', ...peer.pkg.split('/'), ...peer.entry);
  const works = () => existsSync(cli) && (peer.works?.(cli) ?? true);
  if (works()) return { cli };
  log(`installing ${peer.pkg}@${peer.version} into ${prefix} (once; not a dependency of savepoint)`);
  mkdirSync(prefix, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--loglevel', 'error', `${peer.pkg}@${peer.version}`], {
    encoding: 'utf8',
    timeout: peer.timeoutMs,
  });
  if (result.status === 0 && works()) return { cli };
  const why = (result.error?.message ?? result.stderr ?? '').trim().split('\n').filter(Boolean).slice(-1)[0] ?? `exit ${result.status}`;
  return { skipped: peer.failed(why) };
}
