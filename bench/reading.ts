// The reading commands over a long journal: a CLI run of a scripted model whose every turn writes
// a file (so every other step is checkpointed), 3,000 steps (`--quick`: 300), then `savepoint log`,
// `savepoint log --html` and `git log --stat agent-journal` over the same commits, alternating,
// each timed from spawn to exit. The targets: `log` at most 3x git's `log --stat`, the HTML page
// (every checkpointed step's diff included) at most 2x `log`. Registered in bench/run.ts as the
// group `reading`; alone: `npm run build && node --import tsx bench/reading.ts [--quick] [--keep]`.
// BENCH_BEFORE_BIN=<another checkout>/bin/savepoint.js times that build too, over the same journal.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchRepo, latencyRow, now, percentile, runAlone, type BenchContext, type BenchGroup, type Row } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
// Another build's bin/savepoint.js (a checkout of an earlier commit), timed over the same journal.
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN;
const ROUNDS = 5;

function timed(cwd: string, command: string, args: string[]): number {
  const t0 = now();
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1', SAVEPOINT_PAGER: 'cat', GIT_PAGER: 'cat' }, maxBuffer: 1 << 30 });
  const ms = now() - t0;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return ms;
}

async function run(context: BenchContext): Promise<Row[]> {
  const turns = context.quick ? 150 : 1500;
  const repo = createBenchRepo(context, 'reading', { fanout: true });
  try {
    const script = join(repo.root, '..', `reading-script-${process.pid}.json`);
    const write = (i: number) => ({ name: 'write_file', input: { path: `src/module${i % 40}.js`, content: `export const value = ${i};\n`.repeat(1 + (i % 7)) } });
    writeFileSync(script, JSON.stringify({ model: 'scripted', turns: [...Array.from({ length: turns }, (_, i) => ({ text: `turn ${i}`, tools: [write(i)] })), { text: 'done' }] }));
    context.log(`reading: recording a run of ${turns} turns (${2 * turns + 1} steps)`);
    const live = spawnSync(process.execPath, [BIN, 'run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'write the modules'], { cwd: repo.root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    if (live.status !== 0) throw new Error(`the recorded run failed: ${live.stderr}`);
    const html = join(repo.root, '..', `reading-${process.pid}.html`);
    const log: number[] = [];
    const page: number[] = [];
    const git: number[] = [];
    const beforeLog: number[] = [];
    const beforePage: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (BEFORE_BIN) {
        beforeLog.push(timed(repo.root, process.execPath, [BEFORE_BIN, 'log']));
        beforePage.push(timed(repo.root, process.execPath, [BEFORE_BIN, 'log', '--html', html]));
      }
      log.push(timed(repo.root, process.execPath, [BIN, 'log']));
      page.push(timed(repo.root, process.execPath, [BIN, 'log', '--html', html]));
      git.push(timed(repo.root, 'git', ['log', '--stat', 'agent-journal']));
    }
    const [logMs, pageMs, gitMs] = [log, page, git].map((samples) => percentile(samples, 50)) as [number, number, number];
    const steps = 2 * turns + 1;
    const ratio = (a: number, b: number) => a / Math.max(b, 1e-9);
    const checked = !context.quick;
    const target = (ok: boolean, text: string) => (checked ? { target: text, ok } : { target: `${text} (full run only)` });
    return [
      latencyRow(`${steps} steps: savepoint log`, ROUNDS, log),
      latencyRow(`${steps} steps: git log --stat agent-journal (same commits)`, ROUNDS, git),
      latencyRow(`${steps} steps: savepoint log --html (every step's diff)`, ROUNDS, page),
      ...(BEFORE_BIN
        ? [latencyRow(`${steps} steps: log, the build at BENCH_BEFORE_BIN`, ROUNDS, beforeLog), latencyRow(`${steps} steps: log --html, the build at BENCH_BEFORE_BIN`, ROUNDS, beforePage)]
        : []),
      { what: 'log / git log --stat, p50', value: `${ratio(logMs, gitMs).toFixed(2)}x`, ...target(ratio(logMs, gitMs) <= 3, '≤ 3x') },
      { what: 'log --html / log, p50', value: `${ratio(pageMs, logMs).toFixed(2)}x`, ...target(ratio(pageMs, logMs) <= 2, '≤ 2x') },
    ];
  } finally {
    repo.remove();
  }
}

export const readingGroup: BenchGroup = { name: 'reading', description: 'log, log --html and git log --stat over a long journal', run };

await runAlone(import.meta.url, run);
