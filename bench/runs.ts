// The runs benchmark: `savepoint runs` (and `--json`) over a journal of 1,000 finished runs of 9
// steps each (four model calls with usage, each followed by a command, then the final answer),
// spawn to exit, the built CLI. Target: ≤ 1 s. The runs are written through the library
// (openJournal, step, finish), as the CLI writes them. BENCH_RUNS_BASELINE=<another savepoint
// checkout, built> times that build's CLI too, alternating with this one, on the same journal.
// Registered in bench/run.ts as the group `runs`; alone: `npm run build && node --import tsx bench/runs.ts [--quick] [--keep]`.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createBenchRepo, latencyRow, now, percentile, type BenchContext, type BenchGroup, type Row , runAlone } from './lib.js';

type Library = typeof import('../src/index.js');

const RUNS = 1000;
const QUICK_RUNS = 100;
const REPEATS = 5;
const TARGET_MS = 1000;

const CHECKOUT = fileURLToPath(new URL('..', import.meta.url));
const BASELINE = process.env.BENCH_RUNS_BASELINE ? resolve(process.env.BENCH_RUNS_BASELINE) : undefined;
const TOOL_TURNS = 4;

async function writeRuns(lib: Library, dir: string, count: number, log: (m: string) => void): Promise<void> {
  const started = now();
  for (let i = 0; i < count; i++) {
    const journal = await lib.openJournal({ dir, run: `run-${String(i).padStart(4, '0')}`, task: `task number ${i}`, model: 'claude-sonnet-4-5', startCheckpoint: undefined });
    try {
      const usage = () => ({ inputTokens: 1200 + i, outputTokens: 80, cacheReadInputTokens: 1000 });
      for (let turn = 1; turn <= TOOL_TURNS; turn++) {
        await journal.step('model', { turn }, () => ({ text: 'run it' }), { usage });
        await journal.step('run_bash', { command: `echo ${turn}` }, () => ({ exitCode: 0, output: `${turn}\n` }), { intent: true });
      }
      await journal.step('model', { turn: TOOL_TURNS + 1 }, () => ({ text: 'done' }), { usage });
      await journal.finish('finished', { final: 'done' });
    } finally {
      journal.close();
    }
    if ((i + 1) % 100 === 0) log(`  wrote ${i + 1} runs (${((now() - started) / 1000).toFixed(0)} s)`);
  }
}

function timeCli(checkout: string, dir: string, args: string[]): { ms: number; stdout: string } {
  const t0 = now();
  const result = spawnSync(process.execPath, [join(checkout, 'bin/savepoint.js'), ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 1 << 28 });
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
    const checkouts = [CHECKOUT, ...(BASELINE ? [BASELINE] : [])];
    const times = new Map(checkouts.map((c) => [c, { table: [] as number[], json: [] as number[] }]));
    for (let i = 0; i < REPEATS; i++) {
      for (const checkout of i % 2 === 0 ? checkouts : [...checkouts].reverse()) {
        times.get(checkout)!.table.push(timeCli(checkout, repo.root, ['runs']).ms);
        const out = timeCli(checkout, repo.root, ['runs', '--json']);
        times.get(checkout)!.json.push(out.ms);
        const runs = (JSON.parse(out.stdout) as { runs: Array<{ steps: number; modelCalls: number }> }).runs;
        if (runs.length !== count || runs.some((r) => r.steps !== 2 * TOOL_TURNS + 1 || r.modelCalls !== TOOL_TURNS + 1)) throw new Error(`runs --json listed ${runs.length} runs, or wrong totals`);
      }
    }
    const checked = !context.quick;
    const target = (samples: number[]) => (checked ? { target: `p50 ≤ ${TARGET_MS / 1000} s`, ok: percentile(samples, 50) <= TARGET_MS } : {});
    const size = count.toLocaleString('en-US');
    const rows: Row[] = [];
    if (BASELINE) {
      const before = times.get(BASELINE)!;
      rows.push(latencyRow(`baseline (${BASELINE}): savepoint runs over ${size} runs`, REPEATS, before.table, { total: undefined }));
      rows.push(latencyRow(`baseline: savepoint runs --json over ${size} runs`, REPEATS, before.json, { total: undefined }));
    }
    const { table, json } = times.get(CHECKOUT)!;
    rows.push(latencyRow(`savepoint runs over ${size} runs, spawn to exit`, REPEATS, table, { total: undefined, ...target(table) }));
    rows.push(latencyRow(`savepoint runs --json over ${size} runs`, REPEATS, json, { total: undefined, ...target(json) }));
    return rows;
  } finally {
    repo.remove();
  }
}

export const runsGroup: BenchGroup = {
  name: 'runs',
  description: `savepoint runs over ${RUNS.toLocaleString('en-US')} finished 9-step runs, spawn to exit`,
  run,
};

// Run alone: `node --import tsx bench/runs.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
