// The long-session benchmark (issue 39): what a message and a resume cost in a run of 1,000,
// 6,000 and 20,000 steps, beside pi measured in the same run on a session as long. Each run is
// built through the library in a child process (bench/session-build.ts: a provider that answers at
// once, a read_file call per turn, a 40,000-token context window so the conversation compacts as a
// day-long session's does); pi's session is written in pi's own format with the same turns and
// compactions (bench/pi-session.ts), and Claude Code's in its own (bench/claude-session.ts: made
// from the records of a short session Claude Code itself writes first). Then all three are measured
// through their real CLIs against the local fake Anthropic server, alternating (who goes first
// rotates with each length and each resume):
//
//   Enter → request   the interactive session opened on the run (`savepoint -r <id>`; pi:
//                     `pi --continue`; Claude Code: `claude --resume <id>`), in tmux, a message
//                     typed, and the time from tmux's Enter
//                     to the request's arrival at the server (the tmux send-keys process's own
//                     start, a few ms, is in it); five messages, the median
//   resume            `savepoint continue` killed with SIGKILL while its request is at the server,
//                     then `savepoint resume <id>`: spawn to the first new request's arrival; pi:
//                     `pi -p --continue <message>`, spawn to its first request; Claude Code: `claude
//                     -p --resume <id> <message>` killed with SIGKILL at its request, then the same
//                     again, spawn to its first request; five each, the median
//
// Targets: Enter → request ≤ 100 ms and ≤ 2x pi's, flat from the shortest run to the longest; a
// resume ≤ 400 ms and ahead of pi (and of Claude Code: a row of its own), at every length. The rows
// also give each harness's request body at the server, so that the contexts can be seen to compare.
//
// Every program runs without NODE_EXTRA_CA_CERTS (bench/lib.ts: Node parses the certificates it
// names at every start, a cost of the machine that pi pays too; the fake server is local HTTP). One
// more row at each length measures savepoint's resume with the machine's value set, in the same
// rotation, so that what the machine adds is in the table too.
// pi and Claude Code are installed on demand into the bench's cache folder (bench/peers.ts,
// bench/claude-code.ts); when one cannot be had or driven, its rows say why.
//
// Registered in bench/run.ts as the group `session`; alone: `npm run bench -- session`, or
// `npm run build && node --import tsx bench/session.ts [--quick] [--keep]`. `--quick`: 1,000 steps
// only; BENCH_SESSION_SIZES=1000,6000 names the lengths. BENCH_SESSION_BASELINE=<another savepoint
// checkout, built> measures that build too, in turn with this one.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic, type FakeAnthropic } from '../test/helpers/fake-anthropic.js';
import { createBenchRepo, createTempDir, MACHINE_CA_CERTS, now, percentile, type BenchContext, type BenchGroup, type Row, runAlone } from './lib.js';
import { ensurePi, PI_VERSION } from './peers.js';
import { CLAUDE_PACKAGE, CLAUDE_VERSION, ensureClaude, prepareClaudeHome, type ClaudePlace } from './claude-code.js';
import { claudeMessageLatencies, claudeResumeLatency, writeClaudeSession, type ClaudeSession } from './claude-session.js';
import { piMessageLatencies, piResumeLatency, writePiSession, type PiPlace } from './pi-session.js';
import { BUILD_MODEL, BUILD_TASK, buildRun, NOTES } from './session-build.js';
import { arrivalAfter, arrivals, terminal } from './terminal.js';

const SIZES = [1000, 6000, 20000];
const QUICK_SIZES = [1000];
// Five messages a session: the median of three was the second, which every harness sends still warming up (its JIT and heap).
const MESSAGES = 5;
// Five resumes each: one run's resumes of the same build spread from 259 to 688 ms on this machine,
// so the median of three moved by 50 ms with a single outlier.
const RESUMES = 5;
// Enter → request at most this at every length and at most TARGET_MESSAGE_RATIO × pi's; a resume
// at most TARGET_RESUME_MS and ahead of pi's continue, at every length (issue 39).
const TARGET_MESSAGE_MS = 100;
const TARGET_MESSAGE_RATIO = 2;
const TARGET_RESUME_MS = 400;
const CLAUDE = 'Claude Code';
// The extra resume row's harness: savepoint with NODE_EXTRA_CA_CERTS as the machine sets it.
const WITH_CA_CERTS = 'savepoint, NODE_EXTRA_CA_CERTS set';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
// BENCH_SESSION_BASELINE=<another savepoint checkout, built>: its CLI measured on the same runs, in turn with this one's.
const BASELINE = process.env.BENCH_SESSION_BASELINE ? join(resolve(process.env.BENCH_SESSION_BASELINE), 'bin', 'savepoint.js') : undefined;

// Enter → request for MESSAGES messages in a session opened on the run; the samples in ms, and the last request's size in bytes.
async function messageLatencies(bin: string, root: string, run: string): Promise<{ samples: number[]; requestBytes: number }> {
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
      samples.push((await arrivalAfter(arrived.at, before)) - enter);
      await term.waitFor(new RegExp(`› message ${i}[\\s\\S]*answers "Noted\\."[\\s\\S]*^›\\s*$`, 'm'));
    }
    return { samples, requestBytes: JSON.stringify(fake.requests.at(-1) ?? {}).length };
  } finally {
    await term.close();
    await fake.close();
  }
}

// `savepoint continue` killed while its request is at the server, then `savepoint resume`: spawn to its first request, in ms; and that request's size in bytes. `caCerts`: the resume runs with NODE_EXTRA_CA_CERTS set to it.
async function resumeLatency(bin: string, root: string, run: string, caCerts?: string): Promise<{ ms: number; requestBytes: number }> {
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
    await arrivalAfter(arrived.at, 0);
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    const spawned = now();
    const resumed = spawn(process.execPath, [bin, 'resume', run, '--no-sandbox', '--yes'], { cwd: root, env: caCerts === undefined ? env : { ...env, NODE_EXTRA_CA_CERTS: caCerts }, stdio: 'ignore' });
    const ms = (await arrivalAfter(arrived.at, 1)) - spawned;
    await new Promise((resolve) => resumed.once('exit', resolve));
    return { ms, requestBytes: JSON.stringify(fake.requests[1] ?? {}).length };
  } finally {
    release?.();
    await fake.close();
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const steps = (n: number) => n.toLocaleString('en-US');

async function run(context: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  // BENCH_SESSION_SIZES=1000,6000: only those lengths.
  const sizes = process.env.BENCH_SESSION_SIZES ? process.env.BENCH_SESSION_SIZES.split(',').map(Number) : context.quick ? QUICK_SIZES : SIZES;
  const pi = ensurePi(context.log);
  const piCli = 'cli' in pi ? pi.cli : undefined;
  rows.push({ what: 'pi', value: piCli ? `${PI_VERSION} (@mariozechner/pi-coding-agent)` : `skipped: ${(pi as { skipped: string }).skipped}` });
  const claude = ensureClaude(context.log);
  const claudeCli = 'cli' in claude ? claude.cli : undefined;
  rows.push({ what: 'Claude Code', value: claudeCli ? `${CLAUDE_VERSION} (${CLAUDE_PACKAGE})` : `skipped: ${(claude as { skipped: string }).skipped}` });
  rows.push({ what: 'NODE_EXTRA_CA_CERTS', value: MACHINE_CA_CERTS === undefined ? 'not set on this machine' : `unset for every program measured (the machine sets ${MACHINE_CA_CERTS}); one row with it set` });
  const medians: number[] = [];
  for (const [index, size] of sizes.entries()) {
    const repo = createBenchRepo(context, `session-${size}`);
    const piHome = createTempDir(context, `session-pi-${size}`);
    const claudeDir = createTempDir(context, `session-claude-${size}`);
    try {
      const built = await buildRun(repo.root, size);
      context.log(`  built a ${built.steps}-step run (${built.turns} turns, ${built.compactedAfter.length} compactions) in ${(built.ms / 1000).toFixed(1)} s`);
      let place: PiPlace | undefined;
      if (piCli) {
        place = { cli: piCli, agentDir: join(piHome.dir, 'agent'), cwd: join(piHome.dir, 'work') };
        mkdirSync(place.agentDir);
        mkdirSync(place.cwd);
        writeFileSync(join(place.cwd, 'notes.txt'), NOTES);
        const started = now();
        const session = await writePiSession(place, BUILD_TASK, BUILD_MODEL, NOTES, built.turns, built.compactedAfter);
        context.log(`  wrote pi's session, ${session.entries} entries, in ${((now() - started) / 1000).toFixed(1)} s`);
        rows.push({ what: `pi's session beside the ${steps(built.steps)}-step run: ${built.turns} read turns, compacted after the same ${built.compactedAfter.length}, in pi's format`, value: `${steps(session.entries)} entries` });
      }
      // Claude Code's session; a failure to make or drive it skips its rows with the reason, not the group.
      let claudePlace: ClaudePlace | undefined;
      let claudeSession: ClaudeSession | undefined;
      let claudeSkipped: string | undefined;
      const skipClaude = (error: unknown) => {
        claudeSkipped ??= (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
        context.log(`  Claude Code: skipped: ${error instanceof Error ? error.message : String(error)}`);
      };
      if (claudeCli) {
        claudePlace = { cli: claudeCli, home: join(claudeDir.dir, 'home'), cwd: join(claudeDir.dir, 'work') };
        mkdirSync(claudePlace.home);
        mkdirSync(claudePlace.cwd);
        writeFileSync(join(claudePlace.cwd, 'notes.txt'), NOTES);
        prepareClaudeHome(claudePlace);
        const started = now();
        try {
          claudeSession = await writeClaudeSession(claudePlace, BUILD_TASK, BUILD_MODEL, built.turns, built.compactedAfter);
          context.log(`  wrote Claude Code's session, ${claudeSession.records} records, in ${((now() - started) / 1000).toFixed(1)} s`);
          rows.push({ what: `Claude Code's session beside the ${steps(built.steps)}-step run: the same turns and compactions, in its format`, value: `${steps(claudeSession.records)} records` });
        } catch (error) {
          skipClaude(error);
        }
      }
      // Alternating: the order rotates with each length, and with each resume.
      const savepoints = [...(BASELINE ? [['baseline', BASELINE] as const] : []), ['savepoint', BIN] as const];
      type Resume = { ms: number; requestBytes: number };
      interface Harness {
        who: string;
        // Absent: measured for its resume only.
        message?(): Promise<{ samples: number[]; requestBytes: number }>;
        resume(): Promise<Resume>;
      }
      const harnesses: Harness[] = [
        ...savepoints.map(([who, bin]) => ({ who, message: () => messageLatencies(bin, repo.root, built.run), resume: () => resumeLatency(bin, repo.root, built.run) })),
        ...(place ? [{ who: 'pi', message: () => piMessageLatencies(place!, BUILD_MODEL, MESSAGES), resume: () => piResumeLatency(place!, BUILD_MODEL) }] : []),
        ...(claudePlace && claudeSession
          ? [{ who: CLAUDE, message: () => claudeMessageLatencies(claudePlace!, claudeSession!, BUILD_MODEL, MESSAGES), resume: () => claudeResumeLatency(claudePlace!, claudeSession!, BUILD_MODEL) }]
          : []),
        ...(MACHINE_CA_CERTS === undefined ? [] : [{ who: WITH_CA_CERTS, resume: () => resumeLatency(BIN, repo.root, built.run, MACHINE_CA_CERTS) }]),
      ];
      const rotated = (by: number) => harnesses.map((_, i) => harnesses[(i + by) % harnesses.length]!);
      // Claude Code's failures skip its rows (with the reason); the others' fail the group as before.
      const measure = async <T>(who: string, sample: () => Promise<T>): Promise<T | undefined> => {
        if (who === CLAUDE && claudeSkipped) return undefined;
        // The fake server that stamps each request's arrival runs in this process, whose heap holds
        // the run's turns and the peers' sessions, growing with the length: a full collection of it
        // inside a timed window would stamp the arrival late, for whichever harness it hit. One
        // before each sample (the bench runs with --expose-gc) keeps the collections outside.
        (globalThis as { gc?: () => void }).gc?.();
        try {
          return await sample();
        } catch (error) {
          if (who !== CLAUDE) throw error;
          skipClaude(error);
          return undefined;
        }
      };

      const messages = new Map<string, { samples: number[]; requestBytes: number }>();
      for (const harness of rotated(index)) {
        if (!harness.message) continue;
        const sample = await measure(harness.who, harness.message);
        if (!sample) continue;
        messages.set(harness.who, sample);
        context.log(`  ${harness.who}: Enter → request ${sample.samples.map((ms) => ms.toFixed(0)).join(', ')} ms`);
      }

      const resumes = new Map<string, Resume[]>();
      for (let round = 0; round < RESUMES; round++) {
        for (const harness of rotated(index + round)) {
          const sample = await measure(harness.who, harness.resume);
          if (!sample) continue;
          resumes.set(harness.who, [...(resumes.get(harness.who) ?? []), sample]);
          context.log(`  ${harness.who}: resume, spawn → first request ${sample.ms.toFixed(0)} ms`);
        }
      }

      const theirs = messages.get('pi');
      const theirP50 = theirs ? percentile(theirs.samples, 50) : undefined;
      for (const [who] of savepoints) {
        const ours = messages.get(who)!;
        const p50 = percentile(ours.samples, 50);
        const mine = who === 'savepoint';
        if (mine) medians.push(p50);
        const ratio = theirP50 === undefined ? undefined : p50 / theirP50;
        const target = mine ? { target: `≤ ${TARGET_MESSAGE_MS} ms${theirP50 === undefined ? '' : `, ≤ ${TARGET_MESSAGE_RATIO}x pi`}`, ok: p50 <= TARGET_MESSAGE_MS && (ratio === undefined || ratio <= TARGET_MESSAGE_RATIO) } : {};
        rows.push({ what: `${who}: Enter → request, session on the ${steps(built.steps)}-step run (median)`, n: ours.samples.length, p50, peer: theirP50, ratio, ...target });
      }
      const theirResumes = resumes.get('pi')?.map((r) => r.ms);
      const theirResume = theirResumes ? percentile(theirResumes, 50) : undefined;
      for (const [who] of savepoints) {
        const ours = resumes.get(who)!.map((r) => r.ms);
        const p50 = percentile(ours, 50);
        const mine = who === 'savepoint';
        const ratio = theirResume === undefined ? undefined : p50 / theirResume;
        const target = mine ? { target: `≤ ${TARGET_RESUME_MS} ms${theirResume === undefined ? '' : ', < pi'}`, ok: p50 <= TARGET_RESUME_MS && (ratio === undefined || ratio < 1) } : {};
        rows.push({ what: `${who}: resume after kill -9 (pi: -p --continue), spawn → first request, ${steps(built.steps)} steps (median)`, n: ours.length, p50, peer: theirResume, ratio, ...target });
      }
      const withCaCerts = resumes.get(WITH_CA_CERTS)?.map((r) => r.ms);
      if (withCaCerts) {
        const p50 = percentile(withCaCerts, 50);
        rows.push({ what: `${WITH_CA_CERTS} (as this machine has it): resume, spawn → first request, ${steps(built.steps)} steps (median)`, n: withCaCerts.length, p50, peer: theirResume, ratio: theirResume === undefined ? undefined : p50 / theirResume });
      }
      if (claudeCli) {
        const theirMessages = messages.get(CLAUDE);
        const theirResumes = resumes.get(CLAUDE);
        if (claudeSkipped || !theirMessages || theirResumes?.length !== RESUMES) {
          rows.push({ what: `${CLAUDE}: Enter → request and resume, ${steps(built.steps)} steps`, value: `skipped: ${claudeSkipped ?? 'not measured'}` });
        } else {
          const p50 = percentile(theirMessages.samples, 50);
          rows.push({ what: `${CLAUDE}: Enter → request, session on the ${steps(built.steps)}-step run (median)`, n: theirMessages.samples.length, p50, peer: theirP50, ratio: theirP50 === undefined ? undefined : p50 / theirP50 });
          const resume = percentile(theirResumes.map((r) => r.ms), 50);
          rows.push({ what: `${CLAUDE}: resume after kill -9 (claude -p --resume), spawn → first request, ${steps(built.steps)} steps (median)`, n: theirResumes.length, p50: resume, peer: theirResume, ratio: theirResume === undefined ? undefined : resume / theirResume });
          const ours = percentile(resumes.get('savepoint')!.map((r) => r.ms), 50);
          rows.push({ what: `savepoint / ${CLAUDE}: resume, ${steps(built.steps)} steps (medians)`, value: `${(ours / resume).toFixed(2)}x`, target: '< 1x', ok: ours < resume });
        }
      }
      const sizesAt = (who: string) => `${kb(messages.get(who)?.requestBytes ?? 0)} / ${kb(resumes.get(who)?.at(-1)?.requestBytes ?? 0)}`;
      const peers = [...(place ? ['pi'] : []), ...(messages.has(CLAUDE) ? [CLAUDE] : [])];
      rows.push({ what: `the request's body at the server (message / resume), ${steps(built.steps)} steps: ${['savepoint', ...peers].join(' | ')}`, value: ['savepoint', ...peers].map(sizesAt).join(' | ') });
    } finally {
      repo.remove();
      piHome.remove();
      claudeDir.remove();
    }
  }
  if (medians.length > 1) {
    const growth = medians.at(-1)! / medians[0]!;
    rows.push({ what: `Enter → request, longest run / shortest`, value: `${growth.toFixed(2)}x`, target: 'flat (≤ 1.5x)', ok: growth <= 1.5 });
  }
  return rows;
}

/** The long-session group: Enter → request in an interactive session, and a resume after kill -9, at 1,000 to 20,000 steps, beside pi and Claude Code. */
export const sessionGroup: BenchGroup = { name: 'session', description: 'a message in a long session and a resume, at 1,000 / 6,000 / 20,000 steps, beside pi and Claude Code in the same run', run };

await runAlone(import.meta.url, run);
