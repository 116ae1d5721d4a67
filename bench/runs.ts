// The runs benchmark: `savepoint runs` (and `--json`) over a journal of 1,000 finished runs (each a
// model call with usage, a command, a model call and the final answer), spawn to exit, the built
// CLI. Target: ≤ 1 s. The runs are written through the library (openJournal, step, finish), as the
// CLI writes them. With BENCH_SAVEPOINT_DIR=<a savepoint checkout>, that checkout's build is
// measured instead (both the writer and the CLI), for before/after numbers.
// Registered in bench/run.ts as the group `runs`; alone: `npm run build && node --import tsx bench/runs.ts [--quick] [--keep]`.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createBenchRepo, formatTable, latencyRow, now, percentile, type BenchContext, type BenchGroup, type Row } from './lib.js';

type Library = typeof import('../src/index.js');

const RUNS = 1000;
const QUICK_RUNS = 100;
const REPEATS = 5;
const TARGET_MS = 1000;

const CHECKOUT = process.env.BENCH_SAVEPOINT_DIR ? resolve(process.env.BENCH_SAVEPOINT_DIR) : fileURLToPath(new URL('..', import.meta.url));

async function writeRuns(lib: Library, dir: string, count: number, log: (m: string) => void): Promise<void> {
  const started = now();
  for (let i = 0; i < count; i++) {
    const journal = await lib.openJournal({ dir, run: `run-${String(i).padStart(4, '0')}`, task: `task number ${i}`, model: 'claude-sonnet-4-5', startCheckpoint: undefined });
    try {
      const usage = () => ({ inputTokens: 1200 + i, outputTokens: 80, cacheReadInputTokens: 1000 });
      await journal.step('model', { turn: 1 }, () => ({ text: 'run it' }), { usage });
      await journal.step('run_bash', { command: 'true' }, () => ({ exitCode: 0, output: '' }), { intent: true });
      await journal.step('model', { turn: 2 }, () => ({ text: 'done' }), { usage });
      await journal.finish('finished', { final: 'done' });
    } finally {
      journal.close();
    }
    if ((i + 1) % 100 === 0) log(`  wrote ${i + 1} runs (${((now() - started) / 1000).toFixed(0)} s)`);
  }
}

function timeCli(dir: string, args: string[]): { ms: number; stdout: string } {
  const t0 = now();
  const result = spawnSync(process.execPath, [join(CHECKOUT, 'bin/savepoint.js'), ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 1 << 28 });
  const ms = now() - t0;
  if (result.status !== 0) throw new Error(`savepoint ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

async function run(context: BenchContext): Promise<Row[]> {
  const lib = (await import(pathToFileURL(join(CHECKOUT, 'dist/index.js')).href)) as Library;
  const count = context.quick ? QUICK_RUNS : RUNS;
  const repo = createBenchRepo(context, 'runs', { fanout: true });
  try {
    context.log(`writing ${count} runs through the library (${CHECKOUT})`);
    await writeRuns(lib, repo.root, count, context.log);
    const table: number[] = [];
    const json: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      table.push(timeCli(repo.root, ['runs']).ms);
      const out = timeCli(repo.root, ['runs', '--json']);
      json.push(out.ms);
      const runs = (JSON.parse(out.stdout) as { runs: Array<{ steps: number; modelCalls: number; tokens: { input: number } }> }).runs;
      if (runs.length !== count || runs.some((r) => r.steps !== 3 || r.modelCalls !== 2)) throw new Error(`runs --json listed ${runs.length} runs, or wrong totals`);
    }
    const checked = !context.quick;
    const target = (samples: number[]) => (checked ? { target: `p50 ≤ ${TARGET_MS / 1000} s`, ok: percentile(samples, 50) <= TARGET_MS } : {});
    return [
      latencyRow(`savepoint runs over ${count.toLocaleString('en-US')} runs, spawn to exit`, REPEATS, table, { total: undefined, ...target(table) }),
      latencyRow(`savepoint runs --json over ${count.toLocaleString('en-US')} runs`, REPEATS, json, { total: undefined, ...target(json) }),
    ];
  } finally {
    repo.remove();
  }
}

export const runsGroup: BenchGroup = {
  name: 'runs',
  description: `savepoint runs over ${RUNS.toLocaleString('en-US')} finished runs, spawn to exit`,
  run,
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flags = process.argv.slice(2);
  const rows = await run({ quick: flags.includes('--quick'), keep: flags.includes('--keep'), log: (m) => console.error(m) });
  console.log(formatTable(rows));
  process.exitCode = rows.some((r) => r.ok === false) ? 1 : 0;
}
