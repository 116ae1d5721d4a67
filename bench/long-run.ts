// The hour-long-run benchmark: a 2,000-turn CLI run (`--quick`: 200) against the fake Anthropic
// server with a 40,000-token context window, each turn reading a ~4,000-character document, so the
// conversation compacts every few dozen turns (a `compact` step each time). It measures what the
// harness adds per step and whether that grows from the first 100 turns to the last 100 (the
// journal holds thousands of entries by then, the conversation keeps being compacted), the CLI's
// peak resident memory, and the identical command's replay (no request at all, compactions
// included). Registered in bench/run.ts as the group `longrun`; it also runs alone:
// `npm run build && node --import tsx bench/long-run.ts [--quick] [--keep]`.
//
//   overhead of a step = the gap between its step line and the one before, less its own time
//   (the server's for a model or compact step, the recorded durationMs for a tool step)
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import { isCompactionRequest } from '../src/model/compaction.js';
import { turnIndex } from '../src/model/script-turn.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { createBenchRepo, gitDirSize, latencyRow, megabytes, now, repackedCopySize, sum, type BenchContext, type BenchGroup, type BenchRepo, type Row, runAlone } from './lib.js';

type Library = typeof import('../src/index.js');

const TURNS = 2000;
const QUICK_TURNS = 200;
const WINDOW_TURNS = 100;
const CONTEXT_WINDOW = 40_000;
const DOCS = 20;
const TARGET_RSS_MB = 150;
const TARGET_GROWTH = 1.3;
// What the journal's roll-ups leave in .git, against `git repack -a -d -f` of the same repository (issue 25).
const TARGET_DISK = 1.5;
const TASK = 'benchmark: read the documents, turn after turn, for an hour';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
const TIME = '/usr/bin/time';

// Server time of each /v1/messages request, in the order they finished.
const serverMs: number[] = [];
const startedAt = new WeakMap<ServerResponse, number>();
let subscribed = false;
function listen(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('http.server.request.start', (m) => {
    const { request, response } = m as { request: IncomingMessage; response: ServerResponse };
    if (request.url?.startsWith('/v1/messages')) startedAt.set(response, now());
  });
  subscribe('http.server.response.finish', (m) => {
    const started = startedAt.get((m as { response: ServerResponse }).response);
    if (started !== undefined) serverMs.push(now() - started);
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  // Arrival of each step line, by step number, relative to spawn.
  at: Map<number, number>;
  peakRssMb: number | undefined;
}

function runCli(repo: BenchRepo, url: string): Promise<Run> {
  const timed = existsSync(TIME);
  const args = ['run', '--yes', '--context-window', String(CONTEXT_WINDOW), TASK];
  const command = timed ? TIME : process.execPath;
  const argv = timed ? ['-f', 'PEAK_RSS_KB=%M', process.execPath, BIN, ...args] : [BIN, ...args];
  const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
  delete env.ANTHROPIC_AUTH_TOKEN;
  return new Promise((done, fail) => {
    const started = now();
    const child = spawn(command, argv, { cwd: repo.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const at = new Map<number, number>();
    let stdout = '';
    let rest = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const when = now() - started;
      stdout += chunk;
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const step = /^\s*#(\d+) {2}(LIVE|REPLAYED)/.exec(line);
        if (step) at.set(Number(step[1]), when);
      }
      // Keep the tail only: thousands of step lines are not needed once timed.
      if (stdout.length > 200_000) stdout = stdout.slice(-100_000);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      const rss = /PEAK_RSS_KB=(\d+)/.exec(stderr);
      done({ code, stdout, stderr, wallMs: now() - started, at, peakRssMb: rss ? Number(rss[1]) / 1024 : undefined });
    });
  });
}

function check(ok: boolean, what: string, run?: Run): void {
  if (!ok) throw new Error(`longrun benchmark: ${what}${run ? `\n--- exit ${run.code}, stdout (tail):\n${run.stdout.slice(-2000)}\n--- stderr:\n${run.stderr.slice(-2000)}` : ''}`);
}

// Turn k reads document k mod DOCS; the last turn answers.
function turnsFor(turns: number): (body: { messages: { role: string; content: unknown }[] }) => ScriptTurn {
  return (body) => {
    const k = turnIndex(body.messages);
    return k < turns ? { text: `Turn ${k + 1}.`, tools: [{ name: 'read_file', input: { path: `docs/doc${k % DOCS}.txt` } }] } : { text: `Done: ${turns} documents read.` };
  };
}

async function run(context: BenchContext): Promise<Row[]> {
  const lib = (await import(new URL('../dist/index.js', import.meta.url).href)) as Library;
  listen();
  const turns = context.quick ? QUICK_TURNS : TURNS;
  const window = Math.min(WINDOW_TURNS, Math.floor(turns / 4));
  const fake = await startFakeAnthropic({ turns: turnsFor(turns), contextWindow: CONTEXT_WINDOW });
  const repo = createBenchRepo(context, 'longrun');
  try {
    mkdirSync(`${repo.root}/docs`, { recursive: true });
    for (let i = 0; i < DOCS; i++) writeFileSync(`${repo.root}/docs/doc${i}.txt`, `Document ${i}: ${'a line of notes to read. '.repeat(3)}\n`.repeat(50));
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'documents');

    context.log(`live: ${turns} turns, each reading a document, against a ${CONTEXT_WINDOW.toLocaleString('en-US')}-token window`);
    const before = serverMs.length;
    // The fake keeps every request body; counted and dropped as they come, so this process stays small.
    let compactionRequests = 0;
    let requests = 0;
    const drain = () => {
      compactionRequests += fake.requests.filter((r) => isCompactionRequest(r.messages)).length;
      requests += fake.requests.length;
      fake.requests.length = 0;
      fake.headers.length = 0;
    };
    const draining = setInterval(drain, 500);
    const live = await runCli(repo, fake.url).finally(() => clearInterval(draining));
    drain();
    check(live.code === 0, 'the live run failed', live);
    const times = serverMs.slice(before);
    const [id] = await lib.listRuns(repo.root);
    const entries = (await lib.readRun(repo.root, id!))!.entries.filter((e) => e.phase === 'result');
    const compactions = entries.filter((e) => e.kind === 'compact').length;
    const total = entries.length;
    check(live.at.size === total, `expected ${total} step lines, got ${live.at.size}`, live);
    check(times.length === turns + 1 + compactions, `expected ${turns + 1 + compactions} requests, the server saw ${times.length}`, live);
    check(compactions > 0, 'the run never compacted', live);
    check(compactionRequests === compactions, `${compactionRequests} compaction requests for ${compactions} compact steps`, live);

    // Each step's own time: the i-th model-call step (model or compact) took the i-th request.
    const own = new Map<number, number>();
    let request = 0;
    for (const e of entries) own.set(e.step, e.kind === 'model' || e.kind === 'compact' ? times[request++]! : (e.durationMs ?? 0));
    const gap = (step: number) => live.at.get(step)! - live.at.get(step - 1)! - own.get(step)!;
    // The steps of the first and the last `window` model turns (step 1 carries start-up).
    const modelSteps = entries.filter((e) => e.kind === 'model').map((e) => e.step);
    const stepsOf = (from: number, to: number) => entries.map((e) => e.step).filter((s) => s > 1 && s >= from && s < to);
    const first = stepsOf(modelSteps[0]!, modelSteps[window]!).map(gap);
    const last = stepsOf(modelSteps[modelSteps.length - 1 - window]!, Infinity).map(gap);
    const mean = (xs: number[]) => sum(xs) / xs.length;
    const growth = mean(last) / mean(first);
    const overhead = live.wallMs - sum(times) - sum(entries.filter((e) => e.kind !== 'model' && e.kind !== 'compact').map((e) => e.durationMs ?? 0));
    context.log(`  ${total} steps (${compactions} compactions) in ${(live.wallMs / 1000).toFixed(1)} s; peak RSS ${live.peakRssMb?.toFixed(0) ?? '?'} MB`);

    // What the run left in .git (the CLI rolls its packs up before it exits), beside git's own repack of a copy.
    const disk = gitDirSize(`${repo.root}/.git`);
    const repacked = repackedCopySize(context, repo.root, 'longrun-repacked');
    const diskRatio = disk.bytes / repacked.bytes;
    context.log(`  .git: ${megabytes(disk.bytes).toFixed(2)} MB in ${disk.packs} packs, ${disk.loose} loose; after git repack -a -d -f: ${megabytes(repacked.bytes).toFixed(2)} MB`);

    context.log('replay: the identical command again');
    const replay = await runCli(repo, fake.url);
    check(replay.code === 0, 'the replay failed', replay);
    check(fake.requests.length === 0, `the replay sent ${fake.requests.length} requests`, replay);
    check(requests === times.length, `the server counted ${requests} requests and timed ${times.length}`);

    const checked = !context.quick;
    const target = (text: string, ok: boolean): Partial<Row> => (checked ? { target: text, ok } : {});
    const rss = live.peakRssMb;
    return [
      { what: `live: ${turns} turns, ${total} steps, ${compactions} compactions`, n: total, total: live.wallMs },
      { what: 'live: overhead per step, (wall − model − tools) / N', n: total, value: `${(overhead / total).toFixed(2)} ms` },
      latencyRow(`live: overhead per step, the first ${window} turns`, first.length, first),
      latencyRow(`live: overhead per step, the last ${window} turns`, last.length, last),
      { what: `live: growth, mean of the last ${window} turns / the first ${window}`, n: first.length + last.length, value: `${growth.toFixed(2)}x`, ...target(`≤ ${TARGET_GROWTH}x`, growth <= TARGET_GROWTH) },
      rss === undefined
        ? { what: 'live: peak RSS of the CLI (needs /usr/bin/time)', value: 'not measured' }
        : { what: 'live: peak RSS of the CLI', value: `${rss.toFixed(0)} MB`, ...target(`≤ ${TARGET_RSS_MB} MB`, rss <= TARGET_RSS_MB) },
      { what: `disk: .git after ${total} steps (${disk.packs} packs, ${disk.loose} loose objects)`, n: total, value: `${megabytes(disk.bytes).toFixed(2)} MB` },
      { what: `disk: the same .git after git repack -a -d -f (${repacked.packs} pack)`, n: total, value: `${megabytes(repacked.bytes).toFixed(2)} MB` },
      { what: 'disk: .git / git repack -a -d -f', n: total, value: `${diskRatio.toFixed(2)}x`, ...target(`≤ ${TARGET_DISK}x`, diskRatio <= TARGET_DISK) },
      { what: 'replay (identical command, no request): spawn to exit', n: total, total: replay.wallMs },
      ...(replay.peakRssMb !== undefined ? [{ what: 'replay: peak RSS of the CLI', value: `${replay.peakRssMb.toFixed(0)} MB`, ...target(`≤ ${TARGET_RSS_MB} MB`, replay.peakRssMb <= TARGET_RSS_MB) }] : []),
    ];
  } finally {
    repo.remove();
    await fake.close();
  }
}

export const longRunGroup: BenchGroup = {
  name: 'longrun',
  description: '2,000-turn CLI run with compactions against a 40,000-token window: per-step overhead growth, peak RSS, replay',
  run,
};

// Run alone: `node --import tsx bench/long-run.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
