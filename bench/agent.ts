// The agent benchmark: what the harness itself adds to every step of a real CLI run, whether that
// stays flat as the run grows, and how fast the identical command replays the finished run.
//
// `savepoint run --yes` (the built CLI, a child process) drives the real SDK path (HTTP, SSE
// streaming) against the fake Anthropic server of the tests, started in this process: 150 model
// turns that each call one cheap tool (read_file of a small file and run_bash `true`, alternately),
// then a final answer, 301 steps (`--quick`: 30 turns, 61 steps). Then the identical command again,
// which replays it.
//
//   overhead = wall time - the model's own time - the tools' own time
//
// The model's own time is measured server-side (request start to response finish, through Node's
// http diagnostics channels, so the fake is used unchanged); the tools' own time is the
// `durationMs` the journal recorded for each tool step. What is left is the harness: request
// building, the SDK, the journal appends (two commits for run_bash: intent and result), working-tree
// checkpoints, printing, and process start-up. Per-step times come from the arrival of each step
// line on the child's stdout. Registered in bench/run.ts as the group `agent`; it also runs alone:
// `npm run build && node --import tsx bench/agent.ts [--quick] [--keep]`. With
// BENCH_AGENT_PROFILE=<dir>, the CLI children run under `node --cpu-prof` into <dir>.
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { createBenchRepo, createTempDir, latencyRow, now, percentile, sum, type BenchContext, type BenchGroup, type BenchRepo, type Row , runAlone } from './lib.js';

type Library = typeof import('../src/index.js');
type Entry = NonNullable<Awaited<ReturnType<Library['readRun']>>>['entries'][number];

const TARGET_OVERHEAD_MS = 15;
const TARGET_GROWTH = 1.3;
const TARGET_REPLAY_STEP_MS = 1;
const TURNS = 150;
const QUICK_TURNS = 30;
const WINDOW = 100;
const TASK = 'benchmark: read the notes and run a command, many times';

const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));

async function loadLibrary(): Promise<Library> {
  return (await import(new URL('../dist/index.js', import.meta.url).href)) as Library;
}

// ── The model's own time, measured in the server ────────────────────────────────────────────────

// Every request to /v1/messages served in this process: how long the server took, start to finish.
class ServerClock {
  readonly times: number[] = [];
  private readonly started = new WeakMap<ServerResponse, number>();

  constructor() {
    subscribe('http.server.request.start', (message) => {
      const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
      if (request.url?.startsWith('/v1/messages')) this.started.set(response, now());
    });
    subscribe('http.server.response.finish', (message) => {
      const { response } = message as { response: ServerResponse };
      const started = this.started.get(response);
      if (started !== undefined) this.times.push(now() - started);
    });
  }
}

let clock: ServerClock | undefined;

// ── The script: one cheap tool per turn, then an answer ─────────────────────────────────────────

function turnsFor(toolTurns: number): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (let i = 0; i < toolTurns; i++) {
    turns.push({ tools: [i % 2 === 0 ? { name: 'read_file', input: { path: 'notes.txt' } } : { name: 'run_bash', input: { command: 'true' } }] });
  }
  turns.push({ text: `Done: ${toolTurns} tool calls.` });
  return turns;
}

// ── One CLI run, timed line by line ─────────────────────────────────────────────────────────────

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  // Spawn to exit.
  wallMs: number;
  // Arrival of the header line ("savepoint  run ...": the journal is open), relative to spawn.
  headerAt: number;
  // Arrival of each step line, by step number, relative to spawn, and its label.
  steps: Map<number, { at: number; live: boolean }>;
  // Server time of each model request made during this run.
  serverMs: number[];
}

function runCli(repo: BenchRepo, baseURL: string, maxSteps: number, profileDir: string | undefined): Promise<CliRun> {
  const serverBefore = clock!.times.length;
  const args = [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), BIN, 'run', '--yes', '--max-steps', String(maxSteps), TASK];
  const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_BASE_URL: baseURL, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
  delete env.ANTHROPIC_AUTH_TOKEN;
  delete env.SAVEPOINT_DEBUG;
  return new Promise((resolvePromise, reject) => {
    const started = now();
    const child = spawn(process.execPath, args, { cwd: repo.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const steps = new Map<number, { at: number; live: boolean }>();
    let headerAt = Number.NaN;
    let stdout = '';
    let pending = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const at = now() - started;
      stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const step = /^\s*#(\d+) {2}(LIVE|REPLAYED)/.exec(line);
        if (step) steps.set(Number(step[1]), { at, live: step[2] === 'LIVE' });
        else if (Number.isNaN(headerAt) && line.startsWith('savepoint  run ')) headerAt = at;
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      resolvePromise({ code, stdout, stderr, wallMs: now() - started, headerAt, steps, serverMs: clock!.times.slice(serverBefore) });
    });
  });
}

function check(condition: boolean, what: string, run: CliRun): void {
  if (!condition) throw new Error(`agent benchmark: ${what}\n--- exit ${run.code}, stdout (tail):\n${run.stdout.slice(-2000)}\n--- stderr:\n${run.stderr.slice(-2000)}`);
}

// ── The numbers ─────────────────────────────────────────────────────────────────────────────────

interface Steps {
  // By step number (1-based): the recorded result entry.
  entries: Map<number, Entry>;
  count: number;
}

async function readSteps(lib: Library, repo: BenchRepo): Promise<Steps> {
  const [run] = await lib.listRuns(repo.root);
  const entries = new Map<number, Entry>();
  for (const entry of (await lib.readRun(repo.root, run!))!.entries) if (entry.phase === 'result') entries.set(entry.step, entry);
  return { entries, count: entries.size };
}

// The model steps are 1, 3, 5, ... (a model call, then its one tool call); request i answers model
// step 2i + 1.
const isModelStep = (step: number) => step % 2 === 1;
const modelRequestOf = (step: number) => (step - 1) / 2;

// One step's own time: the server's for a model step, the recorded durationMs for a tool step.
function ownTime(live: CliRun, steps: Steps, step: number): number {
  return isModelStep(step) ? live.serverMs[modelRequestOf(step)]! : (steps.entries.get(step)!.durationMs ?? 0);
}

// The harness's time for each step from 2 on: the time between its line and the line before, less
// its own time. (Step 1 carries the process start-up; it is reported on its own.)
function overheads(live: CliRun, steps: Steps): Map<number, number> {
  const gaps = new Map<number, number>();
  for (let step = 2; step <= steps.count; step++) gaps.set(step, live.steps.get(step)!.at - live.steps.get(step - 1)!.at - ownTime(live, steps, step));
  return gaps;
}

function range(gaps: Map<number, number>, first: number, last: number): number[] {
  const out: number[] = [];
  for (let step = first; step <= last; step++) out.push(gaps.get(step)!);
  return out;
}

// Mean overhead by kind of step over a range, for the progress log: where the time goes.
function perKind(gaps: Map<number, number>, steps: Steps, first: number, last: number): string {
  const byKind = new Map<string, number[]>();
  for (let step = first; step <= last; step++) {
    const kind = steps.entries.get(step)!.kind;
    byKind.set(kind, [...(byKind.get(kind) ?? []), gaps.get(step)!]);
  }
  return [...byKind].map(([kind, list]) => `${kind} ${(sum(list) / list.length).toFixed(1)}`).join(', ');
}

const mean = (samples: readonly number[]) => sum(samples) / samples.length;

// What one small durable file write costs on this disk right now (create, write, fsync, rename:
// what the journal does for every object of an append), beside the run, for judging its numbers:
// the machine's other work moves it by a factor of several.
function durableWrites(dir: string, label: string, n: number): number[] {
  const latencies: number[] = [];
  const data = Buffer.alloc(400, 'x');
  for (let i = 0; i < n; i++) {
    const path = join(dir, `${label}-${i}`);
    const t0 = now();
    const fd = openSync(`${path}.tmp`, 'wx');
    writeSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(`${path}.tmp`, path);
    latencies.push(now() - t0);
  }
  return latencies;
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────

async function run(context: BenchContext): Promise<Row[]> {
  const lib = await loadLibrary();
  clock ??= new ServerClock();
  const toolTurns = context.quick ? QUICK_TURNS : TURNS;
  const total = 2 * toolTurns + 1;
  const window = Math.min(WINDOW, Math.floor((total - 1) / 3));
  const checked = !context.quick;
  const profileDir = process.env.BENCH_AGENT_PROFILE ? resolve(process.env.BENCH_AGENT_PROFILE) : undefined;
  const fake = await startFakeAnthropic({ turns: turnsFor(toolTurns) });
  const setUp = (label: string): BenchRepo => {
    const repo = createBenchRepo(context, label, { fanout: true });
    writeFileSync(join(repo.root, 'notes.txt'), 'The notes: one line to read.\nAnd a second one.\n');
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'notes');
    return repo;
  };
  const rows: Row[] = [];
  try {
    // Warm up the page cache (node, dist/, node_modules) with a short run in a throwaway repository.
    {
      const warmup = await startFakeAnthropic({ turns: turnsFor(4) });
      const repo = setUp('agent-warmup');
      try {
        const result = await runCli(repo, warmup.url, 100, undefined);
        check(result.code === 0, 'the warm-up run failed', result);
      } finally {
        repo.remove();
        await warmup.close();
      }
    }

    // The disk's speed, sampled before and after the live run.
    const scratch = createTempDir(context, 'agent-disk');
    const disk = durableWrites(scratch.dir, 'before', 30);
    const repo = setUp('agent');
    try {
      context.log(`live: ${total} steps (${toolTurns} tool turns + an answer) through the CLI and the fake server`);
      const live = await runCli(repo, fake.url, total + 10, profileDir);
      disk.push(...durableWrites(scratch.dir, 'after', 30));
      check(live.code === 0, 'the live run failed', live);
      check(live.steps.size === total && [...live.steps.values()].every((s) => s.live), `expected ${total} LIVE step lines, got ${live.steps.size}`, live);
      check(live.serverMs.length === toolTurns + 1, `expected ${toolTurns + 1} model requests, the server saw ${live.serverMs.length}`, live);
      const steps = await readSteps(lib, repo);
      check(steps.count === total, `expected ${total} steps in the journal, found ${steps.count}`, live);
      const tipBefore = repo.git('rev-parse', 'refs/heads/agent-journal').trim();

      context.log('replay: the identical command again');
      const replay = await runCli(repo, fake.url, total + 10, profileDir);
      check(replay.code === 0, 'the replay failed', replay);
      check(replay.steps.size === total && [...replay.steps.values()].every((s) => !s.live), `expected ${total} REPLAYED step lines, got ${replay.steps.size}`, replay);
      check(replay.serverMs.length === 0, `the replay made ${replay.serverMs.length} model requests`, replay);
      check(replay.stdout.includes('Final answer'), 'the replay printed no final answer', replay);
      check(repo.git('rev-parse', 'refs/heads/agent-journal').trim() === tipBefore, 'the replay moved the journal branch', replay);

      const commits = Number(repo.git('rev-list', '--count', 'refs/heads/agent-journal').trim());

      // The whole live run, process start to exit.
      const modelMs = sum(live.serverMs);
      const toolMs = sum([...steps.entries.values()].filter((e) => e.kind !== 'model').map((e) => e.durationMs ?? 0));
      const overheadMs = live.wallMs - modelMs - toolMs;
      const perStep = overheadMs / total;
      const startup = live.steps.get(1)!.at - live.serverMs[0]!;
      const gaps = overheads(live, steps);
      const first = range(gaps, 2, window + 1);
      const last = range(gaps, total - window + 1, total);
      const growth = mean(last) / mean(first);
      const growthP50 = percentile(last, 50) / percentile(first, 50);
      // What a model call costs in this process beyond the server's time: request building, the SDK,
      // HTTP, SSE parsing (the recorded durationMs, whole milliseconds, less the server's time).
      const client = [...steps.entries.values()].filter((e) => e.kind === 'model').map((e) => (e.durationMs ?? 0) - live.serverMs[modelRequestOf(e.step)]!);
      context.log(`  live: wall ${fmt(live.wallMs)} − model (server) ${fmt(modelMs)} − tools ${fmt(toolMs)} = ${fmt(overheadMs)}: ${perStep.toFixed(2)} ms/step; ${commits} journal commits`);
      context.log(`  mean overhead by kind (ms), steps 2–${window + 1}: ${perKind(gaps, steps, 2, window + 1)}; steps ${total - window + 1}–${total}: ${perKind(gaps, steps, total - window + 1, total)}`);

      const replayFirst = replay.steps.get(1)!.at;
      const replayLast = replay.steps.get(total)!.at;
      const replayPerStep = (replayLast - replayFirst) / (total - 1);
      context.log(`  replay: ${fmt(replay.wallMs)} total, header line at ${fmt(replay.headerAt)}, first REPLAYED line at ${fmt(replayFirst)}, last at ${fmt(replayLast)}`);

      const target = (text: string, ok: boolean): Partial<Row> => (checked ? { target: text, ok } : {});
      rows.push(
        latencyRow('disk now: a small durable write (create, write, fsync, rename)', disk.length, disk),
        {
          what: 'live: overhead per step, (wall − model − tools) / N',
          n: total,
          value: `${perStep.toFixed(2)} ms`,
          total: overheadMs,
          ...target(`≤ ${TARGET_OVERHEAD_MS} ms/step`, perStep <= TARGET_OVERHEAD_MS),
        },
        { what: 'live: wall / model (server) / tools', n: total, value: `${fmt(live.wallMs)} / ${fmt(modelMs)} / ${fmt(toolMs)}` },
        { what: `live: journal commits (results, intents, run.json)`, n: total, value: `${commits} (${(commits / total).toFixed(2)}/step)` },
        { what: "live: start-up (spawn to step 1's line, less its model call)", n: 1, total: startup },
        latencyRow('live: model call beyond the server (SDK, HTTP, SSE)', client.length, client),
        latencyRow(`live: overhead per step, steps 2–${window + 1}`, window, first),
        latencyRow(`live: overhead per step, steps ${total - window + 1}–${total}`, window, last),
        {
          what: `live: growth, mean of the last ${window} / the first ${window} (p50s: ${growthP50.toFixed(2)}x)`,
          n: total,
          value: `${growth.toFixed(2)}x`,
          ...target(`≤ ${TARGET_GROWTH}x`, growth <= TARGET_GROWTH),
        },
        { what: 'replay (identical command): spawn to exit', n: total, total: replay.wallMs },
        { what: 'replay: start-up (spawn to first REPLAYED line)', n: 1, total: replayFirst },
        {
          what: 'replay: per step after start-up',
          n: total - 1,
          value: `${replayPerStep < 1 ? `${(replayPerStep * 1000).toFixed(0)} µs` : `${replayPerStep.toFixed(2)} ms`}`,
          total: replayLast - replayFirst,
          ...target(`≤ ${TARGET_REPLAY_STEP_MS} ms/step`, replayPerStep <= TARGET_REPLAY_STEP_MS),
        },
      );
    } finally {
      repo.remove();
      scratch.remove();
    }
  } finally {
    await fake.close();
  }
  return rows;
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

export const agentGroup: BenchGroup = {
  name: 'agent',
  description: 'CLI run of ~300 steps against a fake server: harness overhead per step, its growth, replay',
  run,
};

// Run alone: `node --import tsx bench/agent.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
