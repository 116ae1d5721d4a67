// The long-session benchmark (issue 39): what a message and a resume cost in a run of 1,000,
// 6,000 and 20,000 steps. Each run is built in this process through the library (a provider that
// answers at once: a read_file call per turn, a summary when the loop compacts, a final answer at
// the end; a 40,000-token context window, so the conversation compacts as a day-long session's
// does), then measured through the real CLI against the local fake Anthropic server:
//
//   Enter → request   the interactive session opened on the run (`savepoint -r <id>`, in tmux),
//                     a message typed, and the time from tmux's Enter to the request's arrival at
//                     the server (the tmux send-keys process's own start, a few ms, is in it);
//                     three messages, the median
//   resume            `savepoint continue` killed with SIGKILL while its request is at the server,
//                     then `savepoint resume <id>`: spawn to the first new request's arrival
//
// Registered in bench/run.ts as the group `session`; alone: `npm run build && node --import tsx
// bench/session.ts [--quick] [--keep]` (`--quick`: 1,000 steps only; BENCH_SESSION_SIZES=1000,6000
// names the lengths).
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic, type FakeAnthropic } from '../test/helpers/fake-anthropic.js';
import { isCompactionRequest } from '../src/model/compaction.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../src/model/types.js';
import { createBenchRepo, now, percentile, type BenchContext, type BenchGroup, type Row, runAlone } from './lib.js';

type Library = typeof import('../src/index.js');

const SIZES = [1000, 6000, 20000];
const QUICK_SIZES = [1000];
const MESSAGES = 3;
const CONTEXT_WINDOW = 40_000;
// Enter → request at most this at every length, and flat (issue 39).
const TARGET_MESSAGE_MS = 100;
const TARGET_RESUME_MS = 400;
const TASK = 'benchmark: a long session, turn after turn';
const MODEL = 'claude-sonnet-4-5';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
// BENCH_SESSION_BASELINE=<another savepoint checkout, built>: its CLI measured on the same runs, in turn with this one's.
const BASELINE = process.env.BENCH_SESSION_BASELINE ? join(resolve(process.env.BENCH_SESSION_BASELINE), 'bin', 'savepoint.js') : undefined;

// A provider that answers at once: a read_file call until `steps` is near, a summary to a compaction request, then a final answer.
function buildingProvider(steps: number, position: () => number): ModelProvider {
  let calls = 0;
  return {
    name: MODEL,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const inputTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
      const usage = { inputTokens, outputTokens: 20, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
      if (isCompactionRequest(request.messages)) return { model: MODEL, content: [{ type: 'text', text: `Summary: ${calls} documents read so far, each the same notes.` }], stopReason: 'end_turn', usage };
      calls++;
      if (position() + 2 >= steps) return { model: MODEL, content: [{ type: 'text', text: 'Done reading.' }], stopReason: 'end_turn', usage };
      return { model: MODEL, content: [{ type: 'text', text: `Reading ${calls}.` }, { type: 'tool_use', id: `toolu_${calls}`, name: 'read_file', input: { path: 'notes.txt' } }], stopReason: 'tool_use', usage };
    },
  };
}

// A finished run of about `steps` steps in `root`; its id.
async function buildRun(lib: Library, root: string, steps: number): Promise<{ run: string; steps: number }> {
  writeFileSync(join(root, 'notes.txt'), 'line one of the notes\nline two of the notes\n');
  let position = 0;
  const outcome = await lib.startRun({
    dir: root,
    task: TASK,
    model: MODEL,
    provider: buildingProvider(steps, () => position),
    sandbox: { use: false },
    contextWindow: CONTEXT_WINDOW,
    onEvent: (event) => {
      if (event.type === 'recorded') position = event.position;
    },
  });
  return { run: outcome.run, steps: outcome.steps };
}

// A tmux terminal of its own running `savepoint <args>` in `cwd`.
function terminal(bin: string, cwd: string, args: string[], env: Record<string, string>) {
  const socket = `sp-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
  const q = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
  const vars = Object.entries({ ...process.env, ...env, TERM: 'xterm-256color' }).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  tmux('new-session', '-d', '-x', '160', '-y', '50', 'env', '-i', ...vars, 'bash', '-c', `cd ${q(cwd)} && exec ${q(process.execPath)} ${q(bin)} ${args.map(q).join(' ')}`);
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-3000', '-t', '0');
  return {
    screen,
    async waitFor(pattern: RegExp, timeoutMs = 300_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(screen())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${screen()}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    text: (text: string) => tmux('send-keys', '-t', '0', '-l', text),
    enter: () => tmux('send-keys', '-t', '0', 'Enter'),
    close: () => {
      try {
        tmux('kill-server');
      } catch {
        // gone already
      }
    },
  };
}

// Arrival times of the fake server's requests, by index.
function arrivals(): { gate: (index: number) => undefined; at: number[] } {
  const at: number[] = [];
  return { at, gate: () => void at.push(now()) };
}

// Enter → request for MESSAGES messages in a session opened on the run; the samples in ms.
async function messageLatencies(bin: string, root: string, run: string): Promise<number[]> {
  const arrived = arrivals();
  const fake: FakeAnthropic = await startFakeAnthropic({ turns: () => ({ text: 'Noted.' }), gate: arrived.gate });
  const term = terminal(bin, root, ['-r', run, '--yes', '--no-sandbox'], { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' });
  const samples: number[] = [];
  try {
    await term.waitFor(/^›\s*$/m);
    for (let i = 1; i <= MESSAGES; i++) {
      const before = arrived.at.length;
      term.text(`message ${i}`);
      await term.waitFor(new RegExp(`› message ${i}\\s*$`, 'm'), 10_000);
      const enter = now();
      term.enter();
      while (arrived.at.length === before) await new Promise((resolve) => setImmediate(resolve));
      samples.push(arrived.at[before]! - enter);
      await term.waitFor(new RegExp(`› message ${i}[\\s\\S]*answers "Noted\\."[\\s\\S]*^›\\s*$`, 'm'));
    }
  } finally {
    term.close();
    await fake.close();
  }
  return samples;
}

// `savepoint continue` killed while its request is at the server, then `savepoint resume`: spawn to its first request, in ms.
async function resumeLatency(bin: string, root: string, run: string): Promise<number> {
  const arrived = arrivals();
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const fake = await startFakeAnthropic({
    turns: () => ({ text: 'Noted.' }),
    gate: (index) => {
      arrived.gate(index);
      if (!first) return undefined;
      first = false;
      return held; // the killed process's request: never answered
    },
  });
  const env = { ...process.env, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
  try {
    const killed = spawn(process.execPath, [bin, 'continue', '--run', run, '--no-sandbox', '--yes', 'one more thing'], { cwd: root, env, stdio: 'ignore' });
    while (arrived.at.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    const spawned = now();
    const resumed = spawn(process.execPath, [bin, 'resume', run, '--no-sandbox', '--yes'], { cwd: root, env, stdio: 'ignore' });
    while (arrived.at.length < 2) await new Promise((resolve) => setImmediate(resolve));
    const ms = arrived.at[1]! - spawned;
    await new Promise((resolve) => resumed.once('exit', resolve));
    return ms;
  } finally {
    release?.();
    await fake.close();
  }
}

async function run(context: BenchContext): Promise<Row[]> {
  const lib: Library = await import('../src/index.js');
  const rows: Row[] = [];
  // BENCH_SESSION_SIZES=1000,6000: only those lengths (a loaded machine builds 20,000 steps slowly).
  const sizes = process.env.BENCH_SESSION_SIZES ? process.env.BENCH_SESSION_SIZES.split(',').map(Number) : context.quick ? QUICK_SIZES : SIZES;
  const medians: number[] = [];
  for (const size of sizes) {
    const repo = createBenchRepo(context, `session-${size}`);
    try {
      const started = now();
      const built = await buildRun(lib, repo.root, size);
      context.log(`  built a ${built.steps}-step run in ${((now() - started) / 1000).toFixed(1)} s`);
      for (const [who, bin] of [...(BASELINE ? [['baseline', BASELINE] as const] : []), ['savepoint', BIN] as const]) {
        const samples = await messageLatencies(bin, repo.root, built.run);
        const p50 = percentile(samples, 50);
        const mine = who === 'savepoint';
        if (mine) medians.push(p50);
        rows.push({ what: `${who}: Enter → request, session on a ${built.steps}-step run (median of ${samples.length})`, value: `${p50.toFixed(0)} ms`, ...(mine ? { target: `≤ ${TARGET_MESSAGE_MS} ms`, ok: p50 <= TARGET_MESSAGE_MS } : {}) });
      }
      for (const [who, bin] of [...(BASELINE ? [['baseline', BASELINE] as const] : []), ['savepoint', BIN] as const]) {
        const resume = await resumeLatency(bin, repo.root, built.run);
        const mine = who === 'savepoint';
        rows.push({ what: `${who}: resume after kill -9, spawn → first request, ${built.steps} steps`, value: `${resume.toFixed(0)} ms`, ...(mine ? { target: `≤ ${TARGET_RESUME_MS} ms`, ok: resume <= TARGET_RESUME_MS } : {}) });
      }
    } finally {
      repo.remove();
    }
  }
  if (medians.length > 1) {
    const growth = medians.at(-1)! / medians[0]!;
    rows.push({ what: `Enter → request, longest run / shortest`, value: `${growth.toFixed(2)}x`, target: 'flat (≤ 1.5x)', ok: growth <= 1.5 });
  }
  return rows;
}

/** The long-session group: Enter → request in an interactive session, and a resume after kill -9, at 1,000 to 20,000 steps. */
export const sessionGroup: BenchGroup = { name: 'session', description: 'a message in a long session and a resume after kill -9, at 1,000 / 6,000 / 20,000 steps', run };

await runAlone(import.meta.url, run);
