// The peers benchmark: savepoint beside pi (@mariozechner/pi-coding-agent, a popular harness that
// appends its session to a JSONL file and never fsyncs), both driven against the same local fake
// Anthropic server (test/helpers/fake-anthropic.ts), in one bench run, alternating.
//
// Each run is a fresh repository and a task answered by N turns of one tool call each (bash turns:
// `true`; read turns: a two-line file), then a final answer. savepoint's script calls its own tool
// names (run_bash, read_file), pi's calls pi's (bash, read). What is compared is the harness's own
// time per turn, measured in the server:
//
//   gap = arrival of request i+1 − end of response i
//
// which holds everything a harness does between two model calls: parse the stream, record the
// answer (savepoint: a durable journal commit; pi: a JSONL append), run the tool (and, for
// savepoint's bash, record the intent before, the result and a working-tree checkpoint after), and
// build the next request. The server answers at once, so work a harness does while it waits for
// the model (savepoint starts the next command's shell then: os/spare-shell.ts) lands in the gap
// too; the paced bash turns are the same turns from a model that takes PACED_MS to answer (a real
// one takes hundreds), which is what a person's run sees. Also: spawn to the first request
// (start-up), and what each run leaves on disk (savepoint's .git growth, pi's session folder).
//
// pi is installed on demand, pinned, into a cache folder (SAVEPOINT_BENCH_CACHE, default
// ~/.cache/savepoint-bench), never as a dependency of this project; without a network the rows
// say why they are skipped. pi ignores ANTHROPIC_BASE_URL: it reads the server's address from the
// models.json of its config folder (PI_CODING_AGENT_DIR). Registered in bench/run.ts as the group
// `peers`; alone: `npm run build && node --import tsx bench/peers.ts [--quick] [--keep]`. With
// BENCH_PEERS_PROFILE=<dir>, savepoint's CLI runs under `node --cpu-prof` into <dir>. With
// BENCH_PEERS_BASELINE=<another savepoint checkout, built>, that build runs too, as a third harness
// in the same alternation (`baseline`): before/after numbers measured under the same load.
import { spawn, spawnSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { claudeProcessEnv, type ClaudePlace } from './claude-code.js';
import { durableCommitFloor } from './commit-floor.js';
import { createBenchRepo, createTempDir, latencyRow, now, percentile, sum, type BenchContext, type BenchGroup, type BenchRepo, type Row, runAlone, installInCache } from './lib.js';

/** The pi release compared against (pinned: a newer one may behave differently). */
export const PI_VERSION = '0.73.1';
const PI_PACKAGE = '@mariozechner/pi-coding-agent';
const MODEL = 'claude-sonnet-4-5';
const TURNS = 100;
const QUICK_TURNS = 20;
const ROUNDS = 2;
// A sandboxed bash turn's gap at most 1.5x pi's, and savepoint's own work in it (the gap less the
// floor of its durable commits, measured in the same run) at most pi's whole gap (issue 25).
const TARGET_BASH_RATIO = 1.5;
const TARGET_OWN_WORK_RATIO = 1.0;
const TARGET_STARTUP_MS = 200;
const TARGET_DISK_RATIO = 3.0;
const TASK = 'benchmark: call the tool once per turn, many times';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));

// `unsandboxed`: this build with --no-sandbox, bash turns only (pi has no sandbox: like for like).
type Harness = 'savepoint' | 'unsandboxed' | 'baseline' | 'pi';
const BASELINE = process.env.BENCH_PEERS_BASELINE ? resolve(process.env.BENCH_PEERS_BASELINE) : undefined;
// `paced`: bash turns from a model that takes PACED_MS to answer each request.
type Kind = 'bash' | 'read' | 'paced';
const PACED_MS = 30;

// ── pi, installed on demand ─────────────────────────────────────────────────────────────────────

/** Where pi's CLI is (installing it first if needed), or why it cannot be had. */
export function ensurePi(log: (message: string) => void): { cli: string } | { skipped: string } {
  return installInCache(log, {
    pkg: PI_PACKAGE,
    version: PI_VERSION,
    folder: `pi-${PI_VERSION}`,
    entry: ['dist', 'cli.js'],
    timeoutMs: 300_000,
    failed: (why) => `pi ${PI_VERSION} could not be installed (npm install failed: ${why}); no network?`,
  });
}

// ── The server's clock ──────────────────────────────────────────────────────────────────────────

// Every /v1/messages request served in this process, by the server's port: when it arrived and
// when its response ended.
class ServerClock {
  private readonly byPort = new Map<number, Array<{ start: number; end: number }>>();
  private readonly open = new WeakMap<ServerResponse, { start: number; end: number }>();

  constructor() {
    subscribe('http.server.request.start', (message) => {
      const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
      if (!request.url?.startsWith('/v1/messages')) return;
      const port = request.socket.localPort ?? 0;
      const timing = { start: now(), end: Number.NaN };
      this.open.set(response, timing);
      const list = this.byPort.get(port) ?? [];
      list.push(timing);
      this.byPort.set(port, list);
    });
    subscribe('http.server.response.finish', (message) => {
      const timing = this.open.get((message as { response: ServerResponse }).response);
      if (timing) timing.end = now();
    });
  }

  requests(url: string): Array<{ start: number; end: number }> {
    return this.byPort.get(Number(new URL(url).port)) ?? [];
  }

  /** Forgets what was served on `url`'s port: a new server may get the port of one closed before. */
  forget(url: string): void {
    this.byPort.delete(Number(new URL(url).port));
  }
}

let clock: ServerClock | undefined;

/**
 * Who runs a bench task: savepoint's CLI at `bin` (with its `flags`, and `node`'s own options), pi
 * configured in `agentDir`, or Claude Code's executable with `place` as its home (bench/claude-code.ts).
 */
export type HarnessCommand = { bin: string; flags?: string[]; node?: string[] } | { piCli: string; agentDir: string } | { claude: ClaudePlace };

/**
 * Runs the bench task (TASK, one tool call a turn for `turns` turns) to its end with `who` in
 * `cwd`, against the fake server at `url`: its exit code and the last 100 KB of each output.
 */
export async function runHarness(who: HarnessCommand, url: string, turns: number, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
  delete env.ANTHROPIC_AUTH_TOKEN;
  delete env.SAVEPOINT_DEBUG;
  let command = process.execPath;
  let args: string[];
  if ('claude' in who) {
    // No auto-compaction: the task's turns are answered from a script that has no summary to give.
    env = { ...claudeProcessEnv(who.claude, url), DISABLE_AUTO_COMPACT: '1' };
    command = who.claude.cli;
    args = ['-p', '--dangerously-skip-permissions', '--model', MODEL, TASK];
  } else if ('bin' in who) {
    env.ANTHROPIC_BASE_URL = url;
    args = [...(who.node ?? []), who.bin, 'run', '--yes', ...(who.flags ?? []), '--model', MODEL, '--max-steps', String(3 * turns + 10), TASK];
  } else {
    writeFileSync(join(who.agentDir, 'models.json'), JSON.stringify({ providers: { anthropic: { baseUrl: url } } }));
    env.PI_CODING_AGENT_DIR = who.agentDir;
    env.PI_OFFLINE = '1';
    args = [who.piCli, '-p', '--provider', 'anthropic', '--model', MODEL, TASK];
  }
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out = (out + chunk).slice(-100_000)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-100_000)));
    child.on('error', fail);
    child.on('close', (exit) => done({ code: exit, stdout: out, stderr: err }));
  });
}

// ── One run ─────────────────────────────────────────────────────────────────────────────────────

function turnsFor(harness: Harness, kind: Kind, turns: number): ScriptTurn[] {
  const tool =
    kind !== 'read'
      ? { name: harness === 'pi' ? 'bash' : 'run_bash', input: { command: 'true' } }
      : { name: harness === 'pi' ? 'read' : 'read_file', input: { path: 'notes.txt' } };
  const pace = kind === 'paced' ? { delayMs: PACED_MS } : {};
  return [...Array.from({ length: turns }, () => ({ tools: [tool], ...pace })), { text: `Done: ${turns} tool calls.` }];
}

interface RunResult {
  // Server-side gaps between a response's end and the next request, one per tool turn.
  gaps: number[];
  // Spawn to the first request's arrival.
  startupMs: number;
  wallMs: number;
  // Bytes the run left on disk: savepoint's .git growth, pi's session folder.
  diskBytes: number;
}

function duBytes(path: string): number {
  const result = spawnSync('du', ['-sb', path], { encoding: 'utf8' });
  return Number(result.stdout.split('\t')[0]) || 0;
}

async function runOnce(harness: Harness, kind: Kind, turns: number, context: BenchContext, piCli: string | undefined, profileDir?: string): Promise<RunResult> {
  const repo = setUp(context, `peers-${harness}-${kind}`);
  const agentDir = createTempDir(context, `peers-${harness}-config`);
  const fake = await startFakeAnthropic({ turns: turnsFor(harness, kind, turns) });
  clock?.forget(fake.url);
  try {
    const gitBefore = duBytes(join(repo.root, '.git'));
    const bin = harness === 'baseline' ? join(BASELINE!, 'bin/savepoint.js') : BIN;
    const flags = [...(harness === 'unsandboxed' ? ['--no-sandbox'] : [])];
    const node = [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])];
    const started = now();
    const { code, stdout, stderr } = await runHarness(harness === 'pi' ? { piCli: piCli!, agentDir: agentDir.dir } : { bin, flags, node }, fake.url, turns, repo.root);
    const wallMs = now() - started;
    const requests = clock!.requests(fake.url);
    if (code !== 0 || requests.length !== turns + 1 || !stdout.includes(`Done: ${turns} tool calls.`)) {
      throw new Error(`peers benchmark: ${harness} ${kind} run: exit ${code}, ${requests.length} requests (expected ${turns + 1})\n--- stdout (tail):\n${stdout.slice(-1500)}\n--- stderr:\n${stderr.slice(-1500)}`);
    }
    const gaps = requests.slice(1).map((request, i) => request.start - requests[i]!.end);
    const diskBytes = harness !== 'pi' ? duBytes(join(repo.root, '.git')) - gitBefore : duBytes(join(agentDir.dir, 'sessions'));
    return { gaps, startupMs: requests[0]!.start - started, wallMs, diskBytes };
  } finally {
    await fake.close();
    repo.remove();
    agentDir.remove();
  }
}

function setUp(context: BenchContext, label: string): BenchRepo {
  const repo = createBenchRepo(context, label, { fanout: true });
  writeFileSync(join(repo.root, 'notes.txt'), 'The notes: one line to read.\nAnd a second one.\n');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'notes');
  return repo;
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────

const mean = (samples: readonly number[]) => sum(samples) / samples.length;

// `who`'s gaps beside pi's: the ratio of the means (checked against TARGET_BASH_RATIO when `targeted`), and of the p50s.
function ratioRow(who: string, samples: number[], theirs: number[], targeted: boolean): Row {
  const ratio = mean(samples) / mean(theirs);
  const ratioP50 = percentile(samples, 50) / percentile(theirs, 50);
  return {
    what: `${who} / pi, mean gap (p50s: ${ratioP50.toFixed(2)}x)`,
    n: samples.length,
    value: `${ratio.toFixed(2)}x`,
    ...(targeted ? { target: `≤ ${TARGET_BASH_RATIO.toFixed(1)}x`, ok: ratio <= TARGET_BASH_RATIO } : {}),
  };
}

async function run(context: BenchContext): Promise<Row[]> {
  clock ??= new ServerClock();
  const pi = ensurePi(context.log);
  const piCli = 'cli' in pi ? pi.cli : undefined;
  const turns = context.quick ? QUICK_TURNS : TURNS;
  const rounds = context.quick ? 1 : ROUNDS;
  const checked = !context.quick;
  const profileDir = process.env.BENCH_PEERS_PROFILE ? resolve(process.env.BENCH_PEERS_PROFILE) : undefined;
  const harnesses: Harness[] = [...(BASELINE ? (['baseline'] as const) : []), 'savepoint', 'unsandboxed', ...(piCli ? (['pi'] as const) : [])];

  // Warm the page cache (node, both harnesses' modules) with a short run of each.
  for (const harness of harnesses) await runOnce(harness, 'bash', 2, context, piCli);

  const results = new Map<string, RunResult[]>();
  const floors = new Map<string, number[]>();
  const add = (key: string, result: RunResult) => results.set(key, [...(results.get(key) ?? []), result]);
  for (let round = 0; round < rounds; round++) {
    // Alternating, and in the opposite order every other round, so drift in the machine's load
    // falls on both.
    const order = round % 2 === 0 ? harnesses : [...harnesses].reverse();
    for (const kind of ['bash', 'read', 'paced'] as const) {
      for (const harness of order) {
        if (harness === 'unsandboxed' && kind !== 'bash') continue; // a read never meets the sandbox; paced: like for like with pi only
        context.log(`round ${round + 1}/${rounds}: ${harness}, ${turns} ${kind} turns`);
        add(`${harness} ${kind}`, await runOnce(harness, kind, turns, context, piCli, harness === 'savepoint' ? profileDir : undefined));
      }
      // The disk's floor for this kind's turns, measured between the harnesses' runs (the disk's
      // speed moves with the machine's load: measured apart, it would not compare).
      if (kind === 'paced') continue; // the bash turns' floor
      const commitsPerTurn = kind === 'bash' ? 3 : 2;
      const commits = await durableCommitFloor(context, turns * commitsPerTurn);
      floors.set(kind, [...(floors.get(kind) ?? []), ...Array.from({ length: turns }, (_, i) => sum(commits.slice(i * commitsPerTurn, (i + 1) * commitsPerTurn)))]);
    }
  }

  const rows: Row[] = [];
  const all = (key: string) => results.get(key) ?? [];
  const gapsOf = (key: string) => all(key).flatMap((r) => r.gaps);
  rows.push({ what: 'pi', value: piCli ? `${PI_VERSION} (${PI_PACKAGE})` : `skipped: ${(pi as { skipped: string }).skipped}` });
  for (const kind of ['bash', 'read'] as const) {
    const label = kind === 'bash' ? 'bash turn (one `true`)' : 'read turn (a two-line file)';
    const ours = gapsOf(`savepoint ${kind}`);
    if (BASELINE) {
      const before = gapsOf(`baseline ${kind}`);
      rows.push(latencyRow(`baseline (${BASELINE}): ${label}`, before.length, before));
    }
    rows.push(latencyRow(`savepoint: ${label}, response end → next request`, ours.length, ours));
    if (!piCli) continue;
    const theirs = gapsOf(`pi ${kind}`);
    rows.push(latencyRow(`pi: ${label}, response end → next request`, theirs.length, theirs));
    rows.push(ratioRow(`${kind} turns: savepoint`, ours, theirs, checked && kind === 'bash'));
    // What the disk alone takes for the commits of such a turn (one per journal entry: the model's
    // answer, the command's intent and its result; a read has no intent): the part of the gap no
    // code change removes while every entry is durable before the next request.
    const perTurn = floors.get(kind) ?? [];
    rows.push(latencyRow(`floor: the file operations of ${kind === 'bash' ? 3 : 2} durable commits (a ${kind} turn's entries)`, perTurn.length, perTurn));
    rows.push({ what: `${kind} turns: that floor / pi's whole gap (p50s)`, value: `${(percentile(perTurn, 50) / percentile(theirs, 50)).toFixed(2)}x` });
    // savepoint's own work in a turn: its gap less what the disk takes for the turn's commits.
    const own = (percentile(ours, 50) - percentile(perTurn, 50)) / percentile(theirs, 50);
    rows.push({
      what: `${kind} turns: savepoint's own work (gap p50 − floor p50) / pi's gap p50`,
      value: `${own.toFixed(2)}x`,
      ...(checked && kind === 'bash' ? { target: `≤ ${TARGET_OWN_WORK_RATIO.toFixed(1)}x`, ok: own <= TARGET_OWN_WORK_RATIO } : {}),
    });
    if (kind === 'bash') {
      // pi runs its commands unconfined; bubblewrap costs ~5 ms a command (namespaces, mounts).
      const unconfined = gapsOf('unsandboxed bash');
      rows.push(latencyRow(`savepoint --no-sandbox: ${label}, response end → next request`, unconfined.length, unconfined));
      rows.push(ratioRow(`${kind} turns: savepoint --no-sandbox`, unconfined, theirs, false));
    }
  }
  // The same bash turns from a model that takes PACED_MS to answer: what a run sees, with the next
  // command's shell started while the model answers. The targets stay on the server that answers at once.
  const pacedOurs = gapsOf('savepoint paced');
  const pacedTheirs = gapsOf('pi paced');
  if (pacedOurs.length) rows.push(latencyRow(`savepoint: bash turn, a model answering in ${PACED_MS} ms, response end → next request`, pacedOurs.length, pacedOurs));
  if (pacedOurs.length && pacedTheirs.length) {
    rows.push(latencyRow(`pi: bash turn, a model answering in ${PACED_MS} ms, response end → next request`, pacedTheirs.length, pacedTheirs));
    rows.push(ratioRow('paced bash turns: savepoint', pacedOurs, pacedTheirs, false));
    const floor = percentile(floors.get('bash') ?? [], 50);
    rows.push({ what: "paced bash turns: savepoint's own work (gap p50 − the bash floor's p50) / pi's gap p50", value: `${((percentile(pacedOurs, 50) - floor) / percentile(pacedTheirs, 50)).toFixed(2)}x` });
  }
  for (const harness of harnesses.filter((h) => h !== 'unsandboxed')) {
    const startups = [...all(`${harness} bash`), ...all(`${harness} read`)].map((r) => r.startupMs);
    const target = harness === 'savepoint' && checked ? { target: `p50 ≤ ${TARGET_STARTUP_MS} ms`, ok: percentile(startups, 50) <= TARGET_STARTUP_MS } : {};
    rows.push(latencyRow(`${harness}: start-up, spawn to first model request`, startups.length, startups, { total: undefined, ...target }));
  }
  // The floor under every start-up above: this Node starting and exiting with nothing to run
  // (120-130 ms for one Node 20 build, 37 ms for Node 22 on the same machine).
  const boots = Array.from({ length: 8 }, () => {
    const t0 = now();
    spawnSync(process.execPath, ['-e', '0']);
    return now() - t0;
  });
  rows.push(latencyRow(`node ${process.version} itself: spawn to exit of \`node -e 0\` (under every start-up)`, boots.length, boots, { total: undefined }));
  for (const harness of harnesses.filter((h) => h !== 'unsandboxed')) {
    const disk = all(`${harness} bash`).map((r) => r.diskBytes);
    const where = harness === 'pi' ? 'session folder' : '.git growth';
    rows.push({ what: `${harness}: on disk after ${turns} bash turns (${where})`, n: disk.length, value: `${(mean(disk) / 1024).toFixed(0)} KB` });
  }
  if (piCli) {
    const ratio = mean(all('savepoint bash').map((r) => r.diskBytes)) / mean(all('pi bash').map((r) => r.diskBytes));
    rows.push({ what: 'on disk: savepoint .git growth / pi session', value: `${ratio.toFixed(2)}x`, ...(checked ? { target: `≤ ${TARGET_DISK_RATIO.toFixed(1)}x`, ok: ratio <= TARGET_DISK_RATIO } : {}) });
  }
  return rows;
}

export const peersGroup: BenchGroup = {
  name: 'peers',
  description: `savepoint beside pi ${PI_VERSION} on one fake server: per-turn gap for bash and read turns, start-up`,
  run,
};

// Run alone: `node --import tsx bench/peers.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
