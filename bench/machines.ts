// The other-machine benchmark: a run of 6,000 steps (`--quick`: 600) is written by the CLI (a
// scripted model, 100 turns of one model call and 59 reads each), stopped there by --max-steps and
// pushed to a bare `origin`. Then, as a CI job does it: a fresh `git clone --depth 1
// --single-branch` clone, and `savepoint resume --yes --push origin`, which fetches origin's journal,
// folds it in, replays the steps after the run's snapshot (no model call), goes live for the last
// answer and pushes.
// Against it: `git clone` of the same repository (every branch, the journal too), the same
// file:// transport. Target: the fetch and resume take at most 2x the clone (issue 38).
// Registered in bench/run.ts as the group `machines`; alone: `npm run build && node --import tsx bench/machines.ts [--quick] [--keep]`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchRepo, createTempDir, latencyRow, now, percentile, type BenchContext, type BenchGroup, type Row, runAlone } from './lib.js';

const TURNS = 100;
const QUICK_TURNS = 10;
const READS_PER_TURN = 59; // a turn is 1 model step and 59 reads: 60 steps
const REPEATS = 3;
const TARGET = 2;
const TASK = 'benchmark: read every note, turn after turn';
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));

function sh(cwd: string, command: string, args: string[]): { ms: number; stdout: string } {
  const t0 = now();
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 1 << 28 });
  const ms = now() - t0;
  if (result.status !== (args.includes('--max-steps') ? 3 : 0)) throw new Error(`${command} ${args.slice(0, 6).join(' ')} exited with ${result.status}: ${result.stderr.slice(-2000)}`);
  return { ms, stdout: result.stdout };
}

async function run(context: BenchContext): Promise<Row[]> {
  const turns = context.quick ? QUICK_TURNS : TURNS;
  const steps = turns * (READS_PER_TURN + 1);
  const repo = createBenchRepo(context, 'machines');
  const scratch = createTempDir(context, 'machines-clones');
  try {
    mkdirSync(join(repo.root, 'notes'));
    for (let i = 0; i < READS_PER_TURN; i++) writeFileSync(join(repo.root, 'notes', `note${i}.txt`), `Note ${i}: a line to read.\n`);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'notes');
    const script = join(scratch.dir, 'script.json');
    const reads = () => Array.from({ length: READS_PER_TURN }, (_, i) => ({ name: 'read_file', input: { path: `notes/note${i}.txt` } }));
    writeFileSync(script, JSON.stringify({ turns: [...Array.from({ length: turns }, (_, t) => ({ text: `Turn ${t + 1}.`, tools: reads() })), { text: 'Every note read.' }] }));
    const origin = join(scratch.dir, 'origin.git');
    sh(scratch.dir, 'git', ['init', '-q', '--bare', '-b', 'main', origin]);
    repo.git('remote', 'add', 'origin', origin);
    repo.git('push', '-q', 'origin', 'main');

    context.log(`writing a ${steps.toLocaleString('en-US')}-step run with the CLI (a scripted model)`);
    const written = sh(repo.root, process.execPath, [BIN, 'run', '--yes', '--no-compact', '--max-steps', String(steps), '--model', `script:${script}`, TASK]);
    context.log(`  ${(written.ms / 1000).toFixed(1)} s; pushing it to origin`);
    repo.git('push', '-q', 'origin', 'agent-journal');

    const url = `file://${origin}`;
    const clone: number[] = [];
    const resume: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      // Each resume finishes the run on origin: put origin's journal back to the 6,000 steps first.
      sh(scratch.dir, 'git', ['--git-dir', origin, 'update-ref', 'refs/heads/agent-journal', repo.git('rev-parse', 'agent-journal').trim()]);
      clone.push(sh(scratch.dir, 'git', ['clone', '-q', url, join(scratch.dir, `full-${i}`)]).ms);
      const job = join(scratch.dir, `job-${i}`);
      sh(scratch.dir, 'git', ['clone', '-q', '--depth', '1', '--single-branch', url, job]);
      const resumed = sh(job, process.execPath, [BIN, 'resume', '--yes', '--push', 'origin']);
      // The steps up to the run's snapshot are not replayed (the resume says from which step it started).
      const fromSnapshot = Number(/the run's snapshot at step (\d+)/.exec(resumed.stdout)?.[1] ?? 0);
      const replayed = (resumed.stdout.match(/REPLAYED \(from journal\)/g) ?? []).length;
      if (fromSnapshot + replayed !== steps || !/Every note read\./.test(resumed.stdout)) throw new Error(`the resume replayed ${replayed} of ${steps} steps (from the snapshot at ${fromSnapshot}):\n${resumed.stdout.slice(-2000)}`);
      resume.push(resumed.ms);
      context.log(`  git clone ${clone[i]!.toFixed(0)} ms; fetch and resume ${resumed.ms.toFixed(0)} ms`);
    }
    const ratio = percentile(resume, 50) / percentile(clone, 50);
    const checked = !context.quick;
    const size = steps.toLocaleString('en-US');
    return [
      latencyRow(`git clone of the repository with a ${size}-step journal (file://)`, REPEATS, clone, { total: undefined }),
      latencyRow(`fresh --depth 1 --single-branch clone: savepoint resume --push origin (fetch, resume a ${size}-step run, 1 live, push)`, REPEATS, resume, { total: undefined }),
      { what: 'fetch and resume / git clone, p50', n: REPEATS, value: `${ratio.toFixed(2)}x`, ...(checked ? { target: `≤ ${TARGET}x`, ok: ratio <= TARGET } : {}) },
    ];
  } finally {
    repo.remove();
    scratch.remove();
  }
}

export const machinesGroup: BenchGroup = {
  name: 'machines',
  description: 'a 6,000-step journal fetched and resumed in a fresh shallow single-branch clone, against git clone of the same repository',
  run,
};

// Run alone: `node --import tsx bench/machines.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
