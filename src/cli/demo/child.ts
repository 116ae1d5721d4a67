// The pieces every demo chapter shares: a temporary repository made from files and committed, and
// the CLI run as a child whose output is shown as it comes (and killed with SIGKILL on cue).
// Tested in test/cli/demo.test.ts.
import { outputSync, startProcess } from '../../os/processes.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Style } from '../terminal/style.js';

const BIN = fileURLToPath(new URL('../../../bin/savepoint.js', import.meta.url));

/** Writes `files` into a new repository at `repo` and commits them on main. */
export function createRepository(repo: string, files: Record<string, string>, message = 'A shop with a failing test'): void {
  mkdirSync(repo, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, name)), { recursive: true });
    writeFileSync(join(repo, name), text);
  }
  const git = (...args: string[]) => outputSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=savepoint demo', '-c', 'user.email=demo@savepoint.invalid', 'commit', '-q', '-m', message);
}

/** Runs the CLI, showing its output; with `killAfterSteps`, kills it (SIGKILL) `killDelayMs` after that many step lines printed. */
export function runChild(
  args: string[],
  cwd: string,
  out: NodeJS.WritableStream,
  style: Style,
  killAfterSteps?: number,
  killDelayMs = 500,
): Promise<{ code: number | null; pid: number }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...(style.color ? { FORCE_COLOR: '1' } : {}), COLUMNS: String(style.width) };
    const { child } = startProcess(process.execPath, [BIN, ...args], { cwd, env }); // stdin empty, stdout and stderr piped
    let steps = 0;
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      steps += lines.filter((line) => /^\s*#\d+\s/.test(line.replace(/\x1b\[[0-9;]*m/g, ''))).length;
      if (killAfterSteps !== undefined && steps >= killAfterSteps) {
        killAfterSteps = undefined;
        setTimeout(() => killWithCommands(child.pid), killDelayMs);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => out.write(chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, pid: child.pid ?? 0 }));
  });
}

// SIGKILL to the CLI and to the command it is running, as a power cut would take both: a command
// runs in a process group of its own, so killing the CLI alone would leave it to finish by itself.
// The CLI's children are read from /proc (Linux); elsewhere only the CLI is killed.
function killWithCommands(pid: number | undefined): void {
  if (!pid) return;
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // not Linux, or the process is gone
  }
  for (const target of [pid, ...children.map((child) => -child)]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
