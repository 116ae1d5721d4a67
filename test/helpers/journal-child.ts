// Runs test/valve/fixtures/appender.mjs as a real child process and collects what it reported,
// so crash tests can SIGKILL it at any moment and then compare its claims with the journal.
//
//   const child = startAppender({ dir: repo.root, run: 'r1', steps: 20 });
//   child.onLine((line) => line === 'done 3' && child.kill());
//   const report = await child.result;   // after 'exit' and 'close': every line is in
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { libraryEntry } from './library.js';
import type { JournalHooks } from '../../src/valve/step-types.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const appenderScript = join(root, 'test/valve/fixtures/appender.mjs');

const library = libraryEntry();

export interface AppenderOptions {
  dir: string;
  run: string;
  steps: number;
  // Every n-th step is an intent step (0: none). Default 3.
  intentEvery?: number;
  // Milliseconds spent inside every step's function.
  workMs?: number;
  // The step whose function never returns.
  hangAt?: number;
  // `<fault point>:<n>`: SIGKILL itself at that point of its n-th append.
  crashAt?: string;
  // `<fault point>:<n>`: print `fault <point> <n>` at that point of its n-th append, then block.
  hangAtFault?: string;
  // SIGKILL itself just before its n-th fsync / its n-th file write (mid-way through writing a file).
  killAtFsync?: number;
  killAtWrite?: number;
  staleLockMs?: number;
}

export interface AppenderReport {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  stderr: string;
  done: number[];
  replayed: number[];
  started: number[];
  inFlight: Array<{ position: number; decision: string }>;
  finished: boolean;
}

export interface Appender {
  process: ChildProcess;
  // Every line so far, and a listener for the ones to come.
  lines: string[];
  onLine(listener: (line: string) => void): void;
  kill(): void;
  result: Promise<AppenderReport>;
}

export function startAppender(options: AppenderOptions): Appender {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SAVEPOINT_ENTRY: library.entry,
    APPENDER_DIR: options.dir,
    APPENDER_RUN: options.run,
    APPENDER_STEPS: String(options.steps),
    APPENDER_INTENT_EVERY: String(options.intentEvery ?? 3),
    APPENDER_WORK_MS: String(options.workMs ?? 0),
    APPENDER_HANG_AT: String(options.hangAt ?? 0),
  };
  for (const name of ['SAVEPOINT_TEST_CRASH_AT', 'SAVEPOINT_TEST_HANG_AT', 'SAVEPOINT_TEST_STALE_MS', 'APPENDER_KILL_AT_FSYNC', 'APPENDER_KILL_AT_WRITE']) delete env[name];
  delete env.NODE_OPTIONS; // the test runner's own hooks are not for the child
  delete env.NODE_TEST_CONTEXT;
  if (options.crashAt) env.SAVEPOINT_TEST_CRASH_AT = options.crashAt;
  if (options.hangAtFault) env.SAVEPOINT_TEST_HANG_AT = options.hangAtFault;
  if (options.killAtFsync !== undefined) env.APPENDER_KILL_AT_FSYNC = String(options.killAtFsync);
  if (options.killAtWrite !== undefined) env.APPENDER_KILL_AT_WRITE = String(options.killAtWrite);
  if (options.staleLockMs !== undefined) env.SAVEPOINT_TEST_STALE_MS = String(options.staleLockMs);
  const child = spawn(process.execPath, [...library.execArgv, appenderScript], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const listeners: Array<(line: string) => void> = [];
  let pending = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      lines.push(line);
      for (const listener of listeners) listener(line);
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const result = (async (): Promise<AppenderReport> => {
    const { code, signal } = await exited;
    await closed; // every byte the child wrote before it died has been read
    return reportOf(lines, stderr, code, signal);
  })();
  return {
    process: child,
    lines,
    onLine: (listener) => listeners.push(listener),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    result,
  };
}

// Runs an appender to its end and returns its report.
export function runAppender(options: AppenderOptions): Promise<AppenderReport> {
  return startAppender(options).result;
}

// Whether the child imports the built dist (fast) or the sources through tsx.
export const usingBuiltLibrary = library.execArgv.length === 0;

/**
 * The appender's run (test/valve/fixtures/appender.mjs: the same steps, values and report) in this
 * process, through the library's openJournal, to its end: for the identical command run again once
 * the killed child is gone, where nothing is killed and no process boundary is the point. Faults
 * and hangs are the child's alone; `workMs` too. `staleLockMs` as for the child.
 */
export async function appendInProcess(options: Pick<AppenderOptions, 'dir' | 'run' | 'steps' | 'intentEvery' | 'staleLockMs'>): Promise<AppenderReport> {
  const { openJournal } = await import('../../src/index.js');
  // The store's own option, as the child hands it in (SAVEPOINT_TEST_STALE_MS): not one of the hooks a caller of openJournal sets.
  const store = (options.staleLockMs !== undefined ? { staleLockMs: options.staleLockMs } : {}) as JournalHooks;
  const lines: string[] = [];
  const say = (line: string) => void lines.push(line);
  const intentEvery = options.intentEvery ?? 3;
  let code = 0;
  let stderr = '';
  try {
    const journal = await openJournal({
      dir: options.dir,
      run: options.run,
      task: `append ${options.steps} steps`,
      store,
      onEvent(event) {
        if (event.type === 'replayed') say(`replayed ${event.position}`);
        else if (event.type === 'started') say(`started ${event.position}`);
        else if (event.type === 'in-flight') say(`in-flight ${event.position} ${event.decision}`);
      },
    });
    try {
      say(`ready ${process.pid}`);
      for (let i = 1; i <= options.steps; i++) {
        const intent = intentEvery > 0 && i % intentEvery === 0;
        const kind = intent ? 'command' : 'work';
        const value = await journal.step(
          kind,
          { i, text: `step ${i} of ${options.run}` },
          async () => {
            say(`running ${i}`);
            return { i, square: i * i };
          },
          { intent, describe: `${kind} ${i}`, summarize: (r: { square: number }) => `square ${r.square}`, onInFlight: () => ({ rerun: true }) },
        );
        if (value?.i !== i || value?.square !== i * i) {
          stderr += `step ${i} returned ${JSON.stringify(value)}\n`;
          code = 3;
          break;
        }
        say(`done ${i}`);
      }
      if (code === 0) {
        await journal.finish('finished', { final: `${options.steps} steps` });
        say('finished');
      }
    } finally {
      journal.close();
      // As the child's end would: nothing of it (a roll-up of its packs) still writes once this returns.
      await journal.store.objects.rollup.settle();
    }
  } catch (error) {
    stderr += `error ${(error as { code?: string })?.code ?? '-'} ${(error as Error)?.message ?? String(error)}\n`;
    code = 1;
  }
  return reportOf(lines, stderr, code, null);
}

// The report of an appender's lines, whether a child process said them or this process did.
function reportOf(lines: string[], stderr: string, code: number | null, signal: NodeJS.Signals | null): AppenderReport {
  const numbers = (word: string) => lines.filter((l) => l.startsWith(`${word} `)).map((l) => Number(l.split(' ')[1]));
  return {
    code,
    signal,
    lines,
    stderr,
    done: numbers('done'),
    replayed: numbers('replayed'),
    started: numbers('started'),
    inFlight: lines.filter((l) => l.startsWith('in-flight ')).map((l) => ({ position: Number(l.split(' ')[1]), decision: l.split(' ')[2]! })),
    finished: lines.includes('finished'),
  };
}
