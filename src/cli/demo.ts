// `savepoint demo`: the seed chapter's lecture demo, with no API key. A temporary repository with a
// real bug, a scripted model fixing it in six laps, a real SIGKILL at lap 4, the identical command
// run again: laps 1–3 flash by as REPLAYED, lap 4 goes LIVE. Then the journal, as plain git.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { DEMO_FILES, DEMO_SCRIPT, DEMO_TASK, STEPS_BEFORE_LAP_4 } from './demo/project.js';
import { probeSandbox } from '../tools/sandbox.js';
import { styleFor, type Style } from './style.js';

const BIN = fileURLToPath(new URL('../../bin/savepoint.js', import.meta.url));

export function demoCommand(): Command {
  return new Command('demo')
    .summary('watch a run crash at lap 4 and resume from the journal (no API key)')
    .description(
      'In a temporary repository with a failing test, a scripted model fixes the bug in six laps. ' +
        'The process is killed (SIGKILL) at lap 4; the identical command is run again, and laps 1–3 ' +
        'replay from the journal in milliseconds while lap 4 goes live.',
    )
    .option('--keep', 'keep the temporary repository and print where it is')
    .action(async (flags: { keep?: boolean }) => {
      process.exitCode = await runDemo({ keep: Boolean(flags.keep) });
    });
}

export async function runDemo(options: { keep: boolean; out?: NodeJS.WriteStream }): Promise<number> {
  const out = options.out ?? process.stdout;
  const style = styleFor(out);
  const base = mkdtempSync(join(tmpdir(), 'savepoint-demo-'));
  const repo = join(base, 'shop');
  const script = join(base, 'demo-model.json');
  try {
    createRepository(repo);
    writeFileSync(script, JSON.stringify(DEMO_SCRIPT, null, 2));
    // The demo's own scripted commands run unconfined where bubblewrap cannot start, rather than not at all.
    const unconfined = probeSandbox(repo).ok ? [] : ['--no-sandbox'];
    const args = ['run', '--yes', ...unconfined, '--model', `script:${script}`, DEMO_TASK];
    const shown = `savepoint run --yes ${unconfined.map((flag) => `${flag} `).join('')}--model script:demo-model.json "${DEMO_TASK}"`;
    out.write(`${style.bold('savepoint demo')}: a coding agent killed at lap 4, then resumed from its journal.\n\n`);
    out.write(`  A small repository with a failing test: ${repo}\n  A scripted model (no API key) fixes it in 6 laps. Watch the step lines.\n\n`);

    out.write(`${style.cyan(`$ ${shown}`)}\n`);
    const first = await runChild(args, repo, out, style, STEPS_BEFORE_LAP_4);
    out.write(style.red(`\n  ✗ kill -9 ${first.pid}: the process died at lap 4, in the middle of a live model call.\n`));
    out.write('  Everything it knew in memory is gone. Its progress is in git. Same command again:\n\n');

    out.write(`${style.cyan(`$ ${shown}`)}\n`);
    const second = await runChild(args, repo, out, style);
    if (second.code !== 0) {
      out.write(style.red(`\nThe resumed run exited with code ${second.code}.\n`));
      return 1;
    }
    out.write(`\n${style.cyan('$ git log --oneline agent-journal')}\n`);
    out.write(execFileSync('git', ['log', '--oneline', '--no-decorate', 'agent-journal'], { cwd: repo, encoding: 'utf8' }));
    out.write(
      `\n  Laps 1–3 came back from the journal in milliseconds: no model call, no command re-run. Lap 4 went live.\n` +
        `  The save file is plain git: ${options.keep ? `cd ${repo} && git log -p agent-journal` : 'git log -p agent-journal (use --keep to look around)'}.\n`,
    );
    return 0;
  } finally {
    if (!options.keep) rmSync(base, { recursive: true, force: true });
  }
}

function createRepository(repo: string): void {
  mkdirSync(repo, { recursive: true });
  for (const [name, text] of Object.entries(DEMO_FILES)) {
    mkdirSync(dirname(join(repo, name)), { recursive: true });
    writeFileSync(join(repo, name), text);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=savepoint demo', '-c', 'user.email=demo@savepoint.invalid', 'commit', '-q', '-m', 'A shop with a failing test');
}

// Runs the CLI, showing its output; with `killAfterSteps`, kills it (SIGKILL) once that many step
// lines have printed and the next lap's live model call is under way.
function runChild(args: string[], cwd: string, out: NodeJS.WritableStream, style: Style, killAfterSteps?: number): Promise<{ code: number | null; pid: number }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...(style.color ? { FORCE_COLOR: '1' } : {}), COLUMNS: String(style.width) };
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let steps = 0;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      steps += lines.filter((line) => /^\s*#\d+\s/.test(line.replace(/\x1b\[[0-9;]*m/g, ''))).length;
      if (killAfterSteps !== undefined && steps >= killAfterSteps) {
        killAfterSteps = undefined;
        setTimeout(() => child.kill('SIGKILL'), 500);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => out.write(chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, pid: child.pid ?? 0 }));
  });
}
