// The parallel-reads benchmark: one answer that asks for two reads of 2 seconds each, then a final
// answer, against the local fake Anthropic server. What is measured is the reads' turn, from the
// arrival of the request the answer went to, to the arrival of the next one (the server answers at
// once): two reads one after another take 4 s and more, at the same time a little over 2 s.
//
// savepoint's slow read is the tests' own MCP server's read-only `slow_lookup` (readOnlyHint: a
// read, run beside the others of its answer); pi (installed on demand into a cache folder, see
// peers.ts) has no MCP, so its slow read is its `bash` tool running `sleep 2; cat notes.txt`, which
// it runs beside the other calls of the answer as well. savepoint's turn also holds the MCP
// server's start (servers start lazily, at the first live call). With BENCH_PEERS_BASELINE=<another
// savepoint checkout, built> (one from before reads ran at once), that build runs too: serial-before
// against now, in the same bench run. Registered in bench/run.ts as `parallel`; alone:
// `npm run build && node --import tsx bench/parallel-reads.ts [--quick]`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import { countingServer, writeMcpJson } from '../test/tools/mcp/helpers.js';
import { trustFolder } from '../test/helpers/trust.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { ensurePi } from './peers.js';
import { createBenchRepo, createTempDir, latencyRow, now, percentile, type BenchContext, type BenchGroup, type Row, runAlone } from './lib.js';

const READ_MS = 2000;
const ROUNDS = 3;
const QUICK_ROUNDS = 1;
const MODEL = 'claude-sonnet-4-5';
const TASK = 'benchmark: read two slow things in one answer';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
const BASELINE = process.env.BENCH_PEERS_BASELINE ? resolve(process.env.BENCH_PEERS_BASELINE) : undefined;
// Two reads at once take one read's time and the harness's own work: at most 1.5 reads' time.
const TARGET_MS = 1.5 * READ_MS;

type Harness = 'savepoint' | 'baseline' | 'pi';

function turnsFor(harness: Harness): ScriptTurn[] {
  const slow = (key: string) =>
    harness === 'pi' ? { name: 'bash', input: { command: `sleep ${READ_MS / 1000}; cat notes.txt # ${key}` } } : { name: 'mcp__counter__slow_lookup', input: { key, ms: READ_MS } };
  return [{ text: 'Reading both.', tools: [slow('alpha'), slow('beta')] }, { text: 'Done: both read.' }];
}

// One run: the time from the first request's arrival to the second's (the answer with the two reads).
async function runOnce(harness: Harness, context: BenchContext, piCli: string | undefined): Promise<number> {
  const repo = createBenchRepo(context, `parallel-${harness}`);
  const config = createTempDir(context, `parallel-${harness}-config`);
  const arrivals: number[] = [];
  const fake = await startFakeAnthropic({ turns: turnsFor(harness), gate: () => void arrivals.push(now()) });
  try {
    writeFileSync(join(repo.root, 'notes.txt'), 'The notes.\n');
    const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
    delete env.ANTHROPIC_AUTH_TOKEN;
    let args: string[];
    if (harness === 'pi') {
      writeFileSync(join(config.dir, 'models.json'), JSON.stringify({ providers: { anthropic: { baseUrl: fake.url } } }));
      Object.assign(env, { PI_CODING_AGENT_DIR: config.dir, PI_OFFLINE: '1' });
      args = [piCli!, '-p', '--provider', 'anthropic', '--model', MODEL, TASK];
    } else {
      writeMcpJson(repo.root, { counter: countingServer(config.dir, '--with-slow') });
      Object.assign(env, { ANTHROPIC_BASE_URL: fake.url }, trustFolder(repo.root, join(config.dir, 'xdg')));
      const bin = harness === 'baseline' ? join(BASELINE!, 'bin/savepoint.js') : BIN;
      args = [bin, 'run', '--yes', '--no-sandbox', '--model', MODEL, TASK];
    }
    const { code, output } = await new Promise<{ code: number | null; output: string }>((done, fail) => {
      const child = spawn(process.execPath, args, { cwd: repo.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.on('error', fail);
      child.on('close', (exit) => done({ code: exit, output: out }));
    });
    if (code !== 0 || arrivals.length !== 2 || !output.includes('Done: both read.')) {
      throw new Error(`parallel benchmark: ${harness}: exit ${code}, ${arrivals.length} requests (expected 2)\n${output.slice(-2000)}`);
    }
    return arrivals[1]! - arrivals[0]!;
  } finally {
    await fake.close();
    repo.remove();
    config.remove();
  }
}

async function run(context: BenchContext): Promise<Row[]> {
  const pi = ensurePi(context.log);
  const piCli = 'cli' in pi ? pi.cli : undefined;
  const harnesses: Harness[] = [...(BASELINE ? (['baseline'] as const) : []), 'savepoint', ...(piCli ? (['pi'] as const) : [])];
  const times = new Map<Harness, number[]>(harnesses.map((h) => [h, []]));
  const rounds = context.quick ? QUICK_ROUNDS : ROUNDS;
  const piFailures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternating, the other way round every other round, so drift in the machine's load falls on all.
    for (const harness of round % 2 === 0 ? harnesses : [...harnesses].reverse()) {
      context.log(`round ${round + 1}/${rounds}: ${harness}, two ${READ_MS / 1000} s reads in one answer`);
      try {
        times.get(harness)!.push(await runOnce(harness, context, piCli));
      } catch (error) {
        if (harness !== 'pi') throw error;
        // pi is another project's build: a run of it that fails is said in its row, not the end of the bench.
        piFailures.push((error as Error).message.split('\n').slice(1, 2).join(' ') || (error as Error).message);
      }
    }
  }
  const label = `two ${READ_MS / 1000} s reads in one answer, request → next request`;
  const rows: Row[] = [];
  if (BASELINE) rows.push(latencyRow(`savepoint serial-before (${BASELINE}): ${label}`, rounds, times.get('baseline')!, { total: undefined }));
  const ours = times.get('savepoint')!;
  rows.push(latencyRow(`savepoint: ${label}`, rounds, ours, { total: undefined, target: `p50 ≤ ${TARGET_MS} ms`, ok: percentile(ours, 50) <= TARGET_MS }));
  if (!piCli) rows.push({ what: 'pi', value: `skipped: ${(pi as { skipped: string }).skipped}` });
  else if (times.get('pi')!.length) rows.push(latencyRow(`pi: ${label} (bash \`sleep 2; cat\`)`, times.get('pi')!.length, times.get('pi')!, { total: undefined }));
  if (piFailures.length) rows.push({ what: `pi: runs that failed (${piFailures.length} of ${rounds})`, value: piFailures[0]! });
  return rows;
}

export const parallelGroup: BenchGroup = {
  name: 'parallel',
  description: 'two 2 s reads in one answer: savepoint (and a serial-before build) beside pi',
  run,
};

// Run alone: `node --import tsx bench/parallel-reads.ts [--quick]`.
await runAlone(import.meta.url, run);
