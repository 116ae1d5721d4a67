// `savepoint runs`, `log` and `show` on real journals written by the real CLI with scripted models:
// a finished run, a run killed (SIGKILL) with a command in flight and run again, a run stopped by
// --max-steps, the journal pushed to a bare remote and cloned (so its runs are only in
// refs/remotes/origin/agent-journal), and a run both machines went on with (diverged). The HTML
// page is opened in real headless Chromium.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CHROMIUM, chromiumDom } from '../../helpers/chromium.js';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GIT_IDENTITY_ENV, gitOut } from '../../helpers/git.js';
import { createTempRepo, type TempRepo } from '../../helpers/temp-repo.js';
import { commandLine, processesIn } from '../../helpers/processes.js';

const BIN = fileURLToPath(new URL('../../../bin/savepoint.js', import.meta.url));
const ANSI = /\x1b\[/;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

// The CLI's environment: no colour settings, no keys or test hooks from the machine, a git identity.
function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(ANTHROPIC_|SAVEPOINT_|GIT_)/.test(name)) continue;
    if (['NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'FORCE_COLOR', 'NO_COLOR', 'COLUMNS'].includes(name)) continue;
    env[name] = value;
  }
  return { ...env, ...GIT_IDENTITY_ENV, COLUMNS: '100', ...extra };
}

function start(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<Result>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, result, get stdout() { return stdout; } };
}

function cli(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Result> {
  return start(cwd, args, env).result;
}

async function json<T>(cwd: string, args: string[]): Promise<T> {
  const result = await cli(cwd, [...args, '--json']);
  assert.equal(result.code, 0, `savepoint ${args.join(' ')} --json failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function waitFor(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}


interface RunRow {
  id: string;
  task: string;
  status: string;
  recordedStatus: string | null;
  model: string | null;
  steps: number;
  modelCalls: number;
  tokens: { input: number; output: number; cacheCreation: number; cacheRead: number };
  resumes: number;
  lineage: unknown;
  createdAt: string | null;
  lastActivity: string | null;
  shownFrom: string;
  sources: string[];
  problem: string | null;
}

const RUN_KEYS = ['id', 'task', 'status', 'recordedStatus', 'model', 'steps', 'modelCalls', 'tokens', 'resumes', 'lineage', 'parent', 'createdAt', 'lastActivity', 'shownFrom', 'sources', 'followUps', 'worktree', 'branch', 'wentLive', 'place', 'problem'];

const TASK_HTML = 'write a <b>note</b> & "quote"';

let repo: TempRepo;
let clone: string;
let scratch: string;
const byId = (runs: RunRow[], id: string) => runs.find((r) => r.id === id)!;

before(async () => {
  repo = await createTempRepo({ files: { 'README.md': '# project\n' }, commit: true });
  scratch = mkdtempSync(join(tmpdir(), 'savepoint-reading-'));
  const script = (name: string, turns: unknown[]) => {
    const path = join(scratch, `${name}.json`);
    writeFileSync(path, JSON.stringify({ model: 'claude-sonnet-4-5', turns }));
    return `script:${path}`;
  };
  const done = script('done', [
    { delayMs: 40, text: 'Writing the note.', tools: [{ name: 'write_file', input: { path: 'note.txt', content: '<b>hi</b> & "bye"\n' } }] },
    { text: 'Wrote <note.txt>.', usage: { inputTokens: 900, outputTokens: 30 } },
  ]);
  const partial = script('partial', [
    { tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
    { tools: [{ name: 'list_files', input: {} }] },
    { text: 'Listed.' },
  ]);
  const crash = script('crash', [
    { delayMs: 120, text: 'Creating lib.js.', tools: [{ name: 'write_file', input: { path: 'lib.js', content: 'export const a = 1;\n' } }], usage: { inputTokens: 1000, outputTokens: 50 } },
    { delayMs: 60, tools: [{ name: 'run_bash', input: { command: 'sleep 8' } }], usage: { inputTokens: 1200, outputTokens: 40 } },
    { tools: [{ name: 'edit_file', input: { path: 'lib.js', old_string: 'a = 1', new_string: 'a = 2' } }] },
    { text: 'Done: a is 2.' },
  ]);

  // One after the other: one live run at a time in a working tree (EWORKTREEBUSY otherwise).
  const first = await cli(repo.root, ['run', '--yes', '--model', done, '--run', 'done-run', TASK_HTML]);
  const stopped = await cli(repo.root, ['run', '--yes', '--model', partial, '--run', 'partial-run', '--max-steps', '1', 'list the files']);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(stopped.code, 3, stopped.stderr);

  // Killed while `sleep 8` (step 4) runs: its intent is recorded, its result never is.
  const args = ['run', '--yes', '--model', crash, '--run', 'crash-run', 'make a be 2'];
  const live = start(repo.root, args);
  await waitFor(() => /#3\s+LIVE/.test(live.stdout), 'step 3 of crash-run');
  // Its intent is recorded before it starts: once `sleep 8` runs in the repository, the kill finds it in flight.
  const root = realpathSync(repo.root);
  await waitFor(() => processesIn(root).some((pid) => commandLine(pid) === 'sleep\x008\x00'), 'step 4 (sleep 8) to run');
  const during = await json<{ runs: RunRow[] }>(repo.root, ['runs']);
  live.child.kill('SIGKILL');
  await live.result;
  const afterKill = await json<{ runs: RunRow[] }>(repo.root, ['runs']);
  statusesSeen.push(byId(during.runs, 'crash-run').status, byId(afterKill.runs, 'crash-run').status);
  const again = await cli(repo.root, args);
  assert.equal(again.code, 0, again.stderr);

  // Another machine: push to a bare remote, clone it; the clone has only origin/agent-journal.
  const bare = join(scratch, 'remote.git');
  await gitOut(scratch, ['init', '-q', '--bare', '--initial-branch=main', bare]);
  await repo.git('remote', 'add', 'origin', bare);
  await repo.git('push', '-q', 'origin', 'main', 'agent-journal');
  clone = join(scratch, 'clone');
  await gitOut(scratch, ['clone', '-q', bare, clone]);
});

const statusesSeen: string[] = [];

after(() => {
  rmSync(scratch, { recursive: true, force: true });
  return repo.remove();
});

describe('savepoint runs', { concurrency: true }, () => {
  it('says running while a live process holds the run, in-flight after a kill mid-command', () => {
    assert.deepEqual(statusesSeen, ['running', 'in-flight']);
  });

  it('lists every run with status, steps, model calls, tokens, resumes and where it lives (--json)', async () => {
    const { runs } = await json<{ runs: RunRow[] }>(repo.root, ['runs']);
    assert.deepEqual(runs.map((r) => r.id).sort(), ['crash-run', 'done-run', 'partial-run']);
    for (const run of runs) assert.deepEqual(Object.keys(run), RUN_KEYS);
    const crash = byId(runs, 'crash-run');
    assert.equal(runs[0]!.id, 'crash-run', 'most recently active first');
    assert.equal(crash.status, 'finished');
    assert.equal(crash.steps, 7);
    assert.equal(crash.modelCalls, 4);
    assert.equal(crash.resumes, 1);
    assert.equal(crash.tokens.input >= 2200, true);
    assert.deepEqual(crash.sources, ['local', 'origin']);
    assert.equal(crash.shownFrom, 'local');
    assert.equal(byId(runs, 'partial-run').status, 'interrupted');
    assert.equal(byId(runs, 'done-run').task, TASK_HTML);
    assert.equal(byId(runs, 'done-run').resumes, 0);
  });

  it('prints a plain table that fits the terminal, without colour off a terminal', async () => {
    const result = await cli(repo.root, ['runs'], { COLUMNS: '80' });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, ANSI);
    for (const line of result.stdout.split('\n')) assert.ok(line.length <= 80, `too wide: ${line}`);
    assert.match(result.stdout, /crash-run\s+finished\s+7\s+4\s/);
    assert.match(result.stdout, /partial-run\s+interrupted/);
    assert.match(result.stdout, /also in origin\/agent-journal/);
  });

  it('shows runs that exist only in a fetched remote-tracking journal, without --all, saying where they live', async () => {
    assert.equal((await gitOut(clone, ['for-each-ref', '--format=%(refname)', 'refs/heads/agent-journal'])), '');
    // A fresh clone lists the runs it fetched (issue 38: before, it said "No runs in this worktree
    // yet" and only --all listed them, though resume found them).
    for (const args of [['runs'], ['runs', '--all']]) {
      const { runs } = await json<{ runs: Array<RunRow & { place: string }> }>(clone, args);
      assert.deepEqual(runs.map((r) => [r.id, r.shownFrom, r.sources, r.place]).sort(), [
        ['crash-run', 'origin', ['origin'], 'elsewhere'],
        ['done-run', 'origin', ['origin'], 'elsewhere'],
        ['partial-run', 'origin', ['origin'], 'elsewhere'],
      ]);
    }
    const human = await cli(clone, ['runs']);
    assert.match(human.stdout, /fetched from origin, only in origin\/agent-journal \(savepoint resume done-run continues it here\)/);
    assert.match(human.stdout, /3 runs \(3 fetched, only in a remote-tracking journal\)/);
    assert.doesNotMatch(human.stdout, /--all/);
  });
});

interface TimelineJson {
  run: RunRow;
  final: string | null;
  error: string | null;
  baseCommit: string | null;
  startCheckpoint: string | null;
  attempts: Array<{ number: number; firstLiveStep: number; replayedSteps: number; liveSteps: number; leftInFlight: number | null }>;
  steps: Array<{ step: number; kind: string; description: string; summary: string | null; state: string; attempt: number; startedInAttempt: number | null; durationMs: number | null; resolution: string | null; checkpoint: string | null; replayedBy: number[] }>;
  totals: { steps: number; modelCalls: number; commands: number; workMs: number; wallMs: number; estimatedCostUsd: number };
  saved: { replayedSteps: number; modelCalls: number; commands: number; tokens: { input: number; output: number }; estimatedCostUsd: number; originalMs: number; byAttempt: Array<{ attempt: number }> };
}

describe('savepoint log', { concurrency: true }, () => {
  it('gives the timeline with each attempt\'s replay and live marks and what resuming saved (--json)', async () => {
    const t = await json<TimelineJson>(repo.root, ['log', 'crash-run']);
    assert.deepEqual(Object.keys(t), ['run', 'final', 'error', 'baseCommit', 'startCheckpoint', 'attempts', 'steps', 'totals', 'saved', 'config']);
    assert.deepEqual(t.attempts.map((a) => [a.number, a.firstLiveStep, a.replayedSteps, a.liveSteps, a.leftInFlight]), [[1, 1, 0, 3, 4], [2, 4, 3, 4, null]]);
    assert.deepEqual(t.steps.map((s) => s.kind), ['model', 'write_file', 'model', 'run_bash', 'model', 'edit_file', 'model']);
    const inFlight = t.steps[3]!;
    assert.equal(inFlight.resolution, 'in-flight-reported');
    assert.equal(inFlight.startedInAttempt, 1);
    assert.equal(inFlight.attempt, 2);
    assert.deepEqual(t.steps.map((s) => s.replayedBy.length), [1, 1, 1, 0, 0, 0, 0]);
    const originalMs = t.steps.slice(0, 3).reduce((sum, s) => sum + (s.durationMs ?? 0), 0);
    assert.deepEqual(
      [t.saved.replayedSteps, t.saved.modelCalls, t.saved.commands, t.saved.tokens.input, t.saved.tokens.output, t.saved.originalMs],
      [3, 2, 0, 2200, 90, originalMs],
    );
    assert.ok(t.saved.originalMs >= 180, 'the scripted delays are in the original durations');
    assert.equal(t.saved.estimatedCostUsd, 0.00795); // 2,200 in and 90 out at Sonnet's $3 / $15 per million
    assert.equal(t.final, 'Done: a is 2.');
    assert.equal(t.totals.steps, 7);
  });

  it('prints one line per step with attempt marks, totals and savings, fitting the terminal', async () => {
    const result = await cli(repo.root, ['log', 'crash-run'], { COLUMNS: '90' });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, ANSI);
    for (const line of result.stdout.split('\n')) assert.ok(line.length <= 90, `too wide: ${line}`);
    assert.match(result.stdout, /── attempt 1 · live from #1 · crashed with #4 in flight/);
    assert.match(result.stdout, /── attempt 2 · replayed #1–#3, live from #4/);
    assert.match(result.stdout, /#4\s+run_bash\s+run_bash "sleep 8"\s+→ outcome unknown: started/);
    assert.match(result.stdout, /Resumes saved 2 model calls, 2,290 tokens/);
    const steps = result.stdout.split('\n').filter((l) => /^\s+#\d+\s/.test(l));
    assert.equal(steps.length, 7);
  });

  it('defaults to the most recently active run and reads remote-only runs', async () => {
    const latest = await cli(repo.root, ['log']);
    assert.match(latest.stdout, /^run crash-run/);
    const remote = await cli(clone, ['log', 'done-run']);
    assert.equal(remote.code, 0, remote.stderr);
    assert.match(remote.stdout, /only in origin\/agent-journal/);
    assert.match(remote.stdout, /write_file note\.txt/);
  });
});

interface ShownJson {
  run: string;
  step: { step: number; kind: string; checkpoint: string | null };
  intent: { phase: string } | null;
  result: { result: unknown; usage?: unknown } | null;
  diff: { from: string; fromLabel: string; to: string; text: string; error: string | null } | null;
}

describe('savepoint show', { concurrency: true }, () => {
  it('shows a step in full with the diff its checkpoint made', async () => {
    const created = await cli(repo.root, ['show', 'crash-run', '2']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /path: lib\.js/);
    assert.match(created.stdout, /\+export const a = 1;/);
    const edited = await cli(repo.root, ['show', 'crash-run', '6']);
    assert.match(edited.stdout, /against the checkpoint of #4/); // the in-flight command's step checkpointed too
    assert.match(edited.stdout, /^-export const a = 1;$/m);
    assert.match(edited.stdout, /^\+export const a = 2;$/m);
    assert.doesNotMatch(edited.stdout, ANSI);
  });

  it('colours the diff when asked to, as on a terminal', async () => {
    const coloured = await cli(repo.root, ['show', 'crash-run', '6'], { FORCE_COLOR: '1' });
    assert.match(coloured.stdout, ANSI);
  });

  it('shows how an in-flight step was resolved, and a model call\'s answer and usage', async () => {
    const bash = await cli(repo.root, ['show', 'crash-run', '4']);
    assert.match(bash.stdout, /resolution\s+in-flight-reported/);
    assert.match(bash.stdout, /started in attempt 1/);
    const model = await cli(repo.root, ['show', 'crash-run', '1']);
    assert.match(model.stdout, /Creating lib\.js\./);
    assert.match(model.stdout, /→ calls write_file/);
    assert.match(model.stdout, /usage\s+1,000 tokens in, 50 out/);
    assert.match(model.stdout, /This step changed no files/);
  });

  it('prints the step, its entries and its diff as JSON, also from a clone', async () => {
    const shown = await json<ShownJson>(clone, ['show', 'crash-run', '6']);
    assert.deepEqual(Object.keys(shown), ['run', 'step', 'intent', 'result', 'diff']);
    assert.equal(shown.step.kind, 'edit_file');
    assert.equal(shown.diff?.to, shown.step.checkpoint);
    assert.equal(shown.diff?.error, null);
    assert.match(shown.diff!.text, /\+export const a = 2;/);
  });
});

describe('errors', { concurrency: true }, () => {
  it('an unknown run exits 1 with one paragraph saying how to list runs', async () => {
    for (const args of [['log', 'nope'], ['show', 'nope', '1']]) {
      const result = await cli(repo.root, args);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^savepoint: There is no run "nope" .*"savepoint runs" lists every run/);
      assert.equal(result.stderr.trim().split('\n').length, 1);
    }
  });

  it('a step that is not a number exits 2; one the run does not have exits 1', async () => {
    const bad = await cli(repo.root, ['show', 'crash-run', 'two']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"two" is not a step number/);
    const missing = await cli(repo.root, ['show', 'crash-run', '99']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /has no step 99: its steps are numbered 1 to 7/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /);
  });

  it('a repository with no runs says how to start one', async () => {
    const empty = await createTempRepo({ commit: true });
    try {
      const log = await cli(empty.root, ['log']);
      assert.equal(log.code, 1);
      assert.match(log.stderr, /There are no runs in .* yet/);
      const runs = await cli(empty.root, ['runs']);
      assert.equal(runs.code, 0);
      assert.match(runs.stdout, /No runs yet/);
      assert.deepEqual(JSON.parse((await cli(empty.root, ['runs', '--json'])).stdout), { runs: [] });
    } finally {
      await empty.remove();
    }
  });
});

describe('savepoint log --html', { concurrency: true }, () => {
  it('writes one self-contained page that Chromium renders with every step, lane and diff', async (t) => {
    if (!existsSync(CHROMIUM)) return t.skip(`${CHROMIUM} is not installed (.ci/run installs it)`);
    const page = join(scratch, 'crash.html');
    const written = await cli(repo.root, ['log', 'crash-run', '--html', page]);
    assert.equal(written.code, 0, written.stderr);
    const html = readFileSync(page, 'utf8');
    assert.doesNotMatch(html, /<(link|img|iframe)\b|\bsrc=|https?:\/\//, 'nothing is loaded from elsewhere');
    const dom = await chromiumDom(`file://${page}#step-6`, join(scratch, 'chromium-1'));
    for (let step = 1; step <= 7; step++) assert.match(dom, new RegExp(`<details class="step[^"]*" id="step-${step}"`));
    assert.match(dom, /<details class="step done" id="step-6" open="">/, 'the page script opened the step named in the address');
    assert.equal(dom.match(/class="seg replayed/g)?.length, 3);
    assert.equal(dom.match(/class="seg live/g)?.length, 7);
    assert.match(dom, /<b>Attempt 2<\/b><small>replayed #1–#3, live from #4<\/small>/);
    assert.match(dom, /<span class="add">\+export const a = 2;<\/span>/);
    assert.match(dom, /in-flight-reported/);
  });

  it('escapes everything the journal holds', async (t) => {
    if (!existsSync(CHROMIUM)) return t.skip(`${CHROMIUM} is not installed (.ci/run installs it)`);
    const page = join(scratch, 'done.html');
    assert.equal((await cli(repo.root, ['log', 'done-run', '--html', page])).code, 0);
    const dom = await chromiumDom(`file://${page}`, join(scratch, 'chromium-2'));
    assert.match(dom, /<h1>write a &lt;b&gt;note&lt;\/b&gt; &amp; "quote"<\/h1>/);
    assert.match(dom, /Wrote &lt;note\.txt&gt;\./);
    assert.doesNotMatch(dom, /<b>hi<\/b>/);
  });
});

describe('a run both machines went on with', () => {
  it('is shown as diverged', async () => {
    // Other runs left files here that this run never saw: go on with the files as they are. The
    // clone opts out of the fence its fetched run gets (--no-push), or its steps would reach origin
    // first and the two machines could not diverge.
    const there = await cli(clone, ['resume', 'partial-run', '--yes', '--keep-worktree', '--no-push']);
    assert.equal(there.code, 0, there.stderr);
    const here = await cli(repo.root, ['resume', 'partial-run', '--yes', '--keep-worktree']);
    assert.equal(here.code, 0, here.stderr);
    await repo.git('push', '-q', 'origin', 'agent-journal');
    await gitOut(clone, ['fetch', '-q', 'origin']);
    const { runs } = await json<{ runs: RunRow[] }>(clone, ['runs', '--all']);
    const partial = byId(runs, 'partial-run');
    assert.equal(partial.status, 'diverged');
    assert.deepEqual(partial.sources, ['local', 'origin']);
    assert.equal(byId(runs, 'crash-run').status, 'finished');
    const human = await cli(clone, ['runs', '--all']);
    assert.match(human.stdout, /partial-run\s+diverged/);
    assert.match(human.stdout, /this machine and a remote each recorded steps the other lacks/);
  });
});
