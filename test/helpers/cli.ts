// Spawning the real CLI (`node bin/savepoint.js ...`) the way a user's shell would, for the
// end-to-end tests: a child process in a real repository, stdin not a terminal, colour off, and an
// environment that holds only what the test gives it (no stray key, base URL or test hook from the
// machine running the tests).
//
//   const cli = startCli(['run', '--yes', 'fix it'], { cwd: repo.root, env: fakeEnv(fake) });
//   await waitUntil(() => fake.requests.length >= 3, 'the third model call');
//   cli.kill();                                  // SIGKILL
//   const result = await cli.result;             // { code, signal, stdout, stderr }
//   const again = await runCli(['run', '--yes', 'fix it'], { cwd: repo.root, env: fakeEnv(fake) });
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { turnIndex } from '../../src/model/script-turn.js';
import type { MessagesBody } from './fake-anthropic.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/savepoint.js');

export const REPLAYED = 'REPLAYED (from journal)';
export const LIVE = 'LIVE (running now)';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  // Wall-clock milliseconds from spawn to exit.
  ms: number;
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  // Everything printed so far.
  readonly stdout: string;
  readonly stderr: string;
  // SIGKILL, if it still runs.
  kill(): void;
  result: Promise<CliResult>;
}

export interface CliOptions {
  cwd: string;
  // Added to the clean base environment; a value of undefined removes the variable.
  env?: Record<string, string | undefined>;
  // Kill the child (SIGKILL) if it has not exited after this long; default 180 s.
  timeoutMs?: number;
  // A command the CLI is started under (e.g. `unshare --pid --fork --mount-proc`), node and its arguments appended.
  under?: string[];
}

// What every CLI child starts from: the machine's environment without anything that would change
// savepoint's behaviour behind the test's back, plus no colour and a git identity.
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(ANTHROPIC_|SAVEPOINT_|GIT_)/.test(name)) continue;
    if (['NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'FORCE_COLOR', 'NO_COLOR', 'COLUMNS'].includes(name)) continue;
    env[name] = value;
  }
  return {
    ...env,
    NO_COLOR: '1',
    COLUMNS: '160',
    GIT_AUTHOR_NAME: 'Savepoint Test',
    GIT_AUTHOR_EMAIL: 'test@savepoint.invalid',
    GIT_COMMITTER_NAME: 'Savepoint Test',
    GIT_COMMITTER_EMAIL: 'test@savepoint.invalid',
  };
}

// The environment that points the SDK at a fake server.
export function fakeEnv(fake: { url: string }, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'test-key', ...extra };
}

// Starts `savepoint <args>` in `cwd`.
export function startCli(args: string[], options: CliOptions): CliProcess {
  const env: Record<string, string> = baseEnv();
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const started = Date.now();
  const [command, ...prefix] = [...(options.under ?? []), process.execPath];
  const child = spawn(command!, [...prefix, BIN, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // 180 s: a safety net against a CLI that never ends, wide enough for a loaded 2-core machine.
  const timer = setTimeout(kill, options.timeoutMs ?? 180_000);
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    // 'close': the process has exited and both pipes are drained, so every byte it wrote is in.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
  return {
    child,
    pid: child.pid!,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    kill,
    result,
  };
}

// Runs `savepoint <args>` to its end.
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).result;
}

// Polls `condition` every 20 ms; fails the test after `timeoutMs` naming what it waited for (90 s by
// default: a safety net, not a duration the test asserts, wide enough for a 2-core machine under load). With
// `child`, fails at once (with its output) if that process ends first, and a timeout kills it, so
// that it does not go on writing into a repository the test's cleanup is removing.
export async function waitUntil(condition: () => boolean, what: string, options: { timeoutMs?: number; child?: CliProcess } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  let exited = false;
  void options.child?.result.then(() => (exited = true));
  while (!condition()) {
    if (exited && !condition()) {
      assert.fail(`the CLI exited before ${what}:\nstdout:\n${options.child!.stdout}\nstderr:\n${options.child!.stderr}`);
    }
    if (Date.now() > deadline) {
      const output = options.child ? `\nstdout:\n${options.child.stdout}\nstderr:\n${options.child.stderr}` : '';
      options.child?.kill();
      assert.fail(`timed out waiting for ${what}${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// The step lines of a CLI output: `#4  REPLAYED (from journal)  read_file a.txt → ...` (or `#4  REPLAYED  ...`).
export interface StepLine {
  position: number;
  mode: 'replayed' | 'live';
  text: string;
}

export function stepLines(stdout: string): StepLine[] {
  const lines: StepLine[] = [];
  for (const raw of stdout.split('\n')) {
    // On a terminal a live view is drawn and erased (\r, ESC[J) on the line a step line then takes.
    const line = raw.replace(/\r$/, '').split(/\r|\x1b\[J/).pop()!;
    // Full labels, or the short ones of a terminal narrower than 100 columns. NOT RUN / DECLINED:
    // recorded by this process without running (in flight before, or declined).
    const match = /^\s*#(\d+)\s+(REPLAYED(?: \(from journal\))?|LIVE(?: \(running now\))?|NOT RUN(?: \(was in flight\))?|DECLINED(?: \(not run\))?)\s+(.*)$/.exec(line);
    if (match) lines.push({ position: Number(match[1]), mode: match[2]!.startsWith('REPLAYED') ? 'replayed' : 'live', text: match[3]! });
  }
  return lines;
}

// Asserts the output's steps are 1..n in order, replayed up to `lastReplayed` and live after it.
export function assertStepModes(stdout: string, lastReplayed: number, context = ''): StepLine[] {
  const lines = stepLines(stdout);
  assert.ok(lines.length > 0, `no step lines in the output${context ? ` (${context})` : ''}:\n${stdout}`);
  assert.deepEqual(
    lines.map((l) => `#${l.position} ${l.mode}`),
    lines.map((_, i) => `#${i + 1} ${i + 1 <= lastReplayed ? 'replayed' : 'live'}`),
    `steps 1-${lastReplayed} replayed and the rest live${context ? ` (${context})` : ''}; the output was:\n${stdout}`,
  );
  return lines;
}

// How many assistant messages a request holds: the turn it asks for (turns counted from 0).
export function assistantMessages(body: MessagesBody): number {
  return body.messages.filter((m) => m.role === 'assistant').length;
}

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  is_error?: boolean;
  content?: unknown;
  text?: string;
}

function blocks(content: unknown): Block[] {
  return Array.isArray(content) ? (content as Block[]) : [];
}

// The tool_result blocks of the last message of a request (the answers to the previous turn).
export function lastToolResults(body: MessagesBody): Block[] {
  const last = body.messages.at(-1);
  assert.ok(last, 'the request has messages');
  return blocks(last.content).filter((b) => b.type === 'tool_result');
}

// The text of a tool_result's content (a string, or text blocks).
export function resultText(block: Block): string {
  if (typeof block.content === 'string') return block.content;
  return blocks(block.content)
    .map((b) => b.text ?? '')
    .join('');
}

// The Messages API's pairing rule, checked on every request a fake server received: each assistant
// tool_use id is answered by a tool_result in the very next message (a user message), nothing is
// answered twice, and no tool_result answers a tool_use that was not asked in the message before.
export function assertToolPairing(requests: MessagesBody[]): void {
  requests.forEach((body, r) => {
    const where = (i: number) => `request ${r + 1}, message ${i + 1}`;
    body.messages.forEach((message, i) => {
      const results = blocks(message.content).filter((b) => b.type === 'tool_result');
      const previous = i > 0 ? body.messages[i - 1]! : undefined;
      const asked = previous?.role === 'assistant' ? blocks(previous.content).filter((b) => b.type === 'tool_use').map((b) => b.id!) : [];
      if (message.role === 'user') {
        const answered = results.map((b) => b.tool_use_id!);
        assert.equal(new Set(answered).size, answered.length, `${where(i)} answers a tool_use twice`);
        assert.deepEqual([...answered].sort(), [...asked].sort(), `${where(i)}: the tool_results must answer exactly the tool_use ids of the message before`);
      } else {
        assert.equal(results.length, 0, `${where(i)}: an assistant message holds a tool_result`);
        const uses = blocks(message.content).filter((b) => b.type === 'tool_use');
        if (uses.length > 0) {
          const next = body.messages[i + 1];
          assert.ok(next, `${where(i)}: a tool_use is the last message of the request, with no tool_result`);
        }
      }
    });
    assert.equal(body.messages.at(-1)?.role, 'user', `request ${r + 1} must end with a user message`);
  });
}

// The repository's files as a user sees them (tracked and untracked-not-ignored, .git excluded),
// path → content, for comparing the outcome of two runs.
export function worktreeFiles(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === '.git') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return files;
}

// savepoint's error message: from `savepoint: ` to the end of stderr, one paragraph (no blank line,
// no stack trace). Lines before it (a library's own console warning) are not part of it.
export function assertOneParagraph(stderr: string): string {
  const start = stderr.search(/^savepoint: /m);
  assert.ok(start >= 0, `stderr has a "savepoint: " message:\n${stderr}`);
  const message = stderr.slice(start).trimEnd();
  assert.ok(!message.includes('\n'), `the message is one paragraph on one line:\n${message}`);
  assertNoStack(stderr);
  return message;
}

// No line of a Node stack trace (`    at fn (file:line)`).
export function assertNoStack(text: string, context = ''): void {
  assert.doesNotMatch(text, /^\s+at .+/m, `no stack trace expected${context ? ` (${context})` : ''}:\n${text}`);
}

// Fake-server turns (by the number of assistant messages, like the scripted model) where the turns
// whose index is in `hold` take `holdMs` to answer: a model call a test can kill the CLI in the middle
// of. Deleting an index from `hold` makes later calls of that turn answer at once.
export function heldTurns(turns: ScriptTurn[], hold: Set<number>, holdMs = 30_000): (body: MessagesBody) => ScriptTurn {
  return (body) => {
    const index = turnIndex(body.messages);
    const turn = turns[index] ?? { text: `(no turn ${index} in the test script)` };
    return hold.has(index) ? { ...turn, delayMs: holdMs } : turn;
  };
}

// Runs git in `cwd`; resolves with its exit code and output, never throws for a non-zero exit.
export function git(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: baseEnv(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

// git's stdout (without the final newline); a non-zero exit fails the test.
export async function gitOut(cwd: string, args: string[]): Promise<string> {
  const result = await git(cwd, args);
  assert.equal(result.code, 0, `git ${args.join(' ')} failed (exit ${result.code}):\n${result.stderr}`);
  return result.stdout.replace(/\n$/, '');
}

// `git fsck --strict` exits 0 and reports nothing but dangling objects (a killed append may leave some).
export async function assertFsckClean(cwd: string): Promise<void> {
  const result = await git(cwd, ['fsck', '--strict', '--no-progress']);
  const complaints = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^dangling \w+ [0-9a-f]{40}$/.test(line) && !/^Checking /.test(line));
  assert.equal(result.code, 0, `git fsck --strict failed:\n${result.stderr}${result.stdout}`);
  assert.deepEqual(complaints, [], 'git fsck --strict complained');
}

// Every path on the agent-journal branch.
export async function journalPaths(cwd: string): Promise<string[]> {
  const out = await gitOut(cwd, ['ls-tree', '-r', '--name-only', 'agent-journal']);
  return out === '' ? [] : out.split('\n');
}

// One journal file, parsed.
export async function journalJson<T = Record<string, unknown>>(cwd: string, path: string): Promise<T> {
  return JSON.parse(await gitOut(cwd, ['show', `agent-journal:${path}`])) as T;
}

// The results of run `run`'s tool steps, in step order, as the tool_result blocks the model was
// handed (the next request is built from these journal entries): for a run on a `script:` model,
// whose requests no test server sees.
export async function journalToolResults(cwd: string, run: string): Promise<Block[]> {
  const steps = (await journalPaths(cwd)).filter((path) => path.startsWith(`runs/${run}/steps/`) && path.endsWith('.json') && !path.endsWith('.intent.json') && !path.endsWith('-model.json'));
  const results: Block[] = [];
  for (const path of steps) {
    const entry = await journalJson<{ result?: { isError?: boolean; output: string } }>(cwd, path);
    if (entry.result) results.push({ type: 'tool_result', ...(entry.result.isError ? { is_error: true } : {}), content: entry.result.output });
  }
  return results;
}

// The ids of the runs on the journal branch.
export async function runIds(cwd: string): Promise<string[]> {
  return [...new Set((await journalPaths(cwd)).map((path) => path.split('/')[1]!))].sort();
}
