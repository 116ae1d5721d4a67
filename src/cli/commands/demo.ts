// `savepoint demo`: the seed chapter's lecture demo, with no API key. A temporary repository with a
// real bug, a scripted model fixing it in six laps, a real SIGKILL at lap 4, the identical command
// run again: laps 1–3 flash by as REPLAYED, lap 4 goes LIVE. Then the journal, as plain git.
// Tested in test/cli/demo.test.ts.
import { outputSync } from '../../os/processes.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { runChapter, CHAPTERS, type ChapterName } from '../demo/chapters.js';
import { createRepository, runChild } from '../demo/child.js';
import { DEMO_FILES, DEMO_SCRIPT, DEMO_TASK, STEPS_BEFORE_LAP_4 } from '../demo/project.js';
import { probeSandbox } from '../../tools/sandbox.js';
import { styleFor } from '../terminal/style.js';

/** The `demo` command: the crash-at-lap-4 demo, or a chapter of the rest of the lecture (--chapter). */
export function demoCommand(): Command {
  return new Command('demo')
    .summary('watch a run crash at lap 4 and resume from the journal (no API key)')
    .description(
      'In a temporary repository with a failing test, a scripted model fixes the bug in six laps. ' +
        'The process is killed (SIGKILL) at lap 4; the identical command is run again, and laps 1–3 ' +
        'replay from the journal in milliseconds while lap 4 goes live.',
    )
    .option('--keep', 'keep the temporary repository and print where it is')
    .addOption(
      new Option(
        '--chapter <name>',
        'the rest of the lecture: "past" (the past is read-only) or "edge" (the honest edge: killed mid-command)',
      ).choices(Object.keys(CHAPTERS)),
    )
    .action(async (flags: { keep?: boolean; chapter?: ChapterName }) => {
      process.exitCode = flags.chapter
        ? await runChapter(flags.chapter, { keep: Boolean(flags.keep) })
        : await runDemo({ keep: Boolean(flags.keep) });
    });
}

/** Plays the crash-at-lap-4 demo on `out`; returns the exit code. */
export async function runDemo(options: { keep: boolean; out?: NodeJS.WriteStream }): Promise<number> {
  const out = options.out ?? process.stdout;
  const style = styleFor(out);
  const base = mkdtempSync(join(tmpdir(), 'savepoint-demo-'));
  const repo = join(base, 'shop');
  const script = join(base, 'demo-model.json');
  try {
    createRepository(repo, DEMO_FILES);
    writeFileSync(script, JSON.stringify(DEMO_SCRIPT, null, 2));
    // The demo's own scripted commands run unconfined where bubblewrap cannot start, rather than not at all.
    const unconfined = probeSandbox(repo).ok ? [] : ['--no-sandbox'];
    const args = ['run', '--yes', ...unconfined, '--model', `script:${script}`, DEMO_TASK];
    const shown = `savepoint run --yes ${unconfined.map((flag) => `${flag} `).join('')}--model script:demo-model.json "${DEMO_TASK}"`;
    out.write(`${style.bold('savepoint demo')}: a coding agent killed at lap 4, then resumed from its journal.\n\n`);
    out.write(
      `  A small repository with a failing test: ${repo}\n  A scripted model (no API key) fixes it in 6 laps. Watch the step lines.\n\n`,
    );

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
    out.write(outputSync('git', ['log', '--oneline', '--no-decorate', 'agent-journal'], { cwd: repo, encoding: 'utf8' }));
    out.write(
      `\n  Laps 1–3 came back from the journal in milliseconds: no model call, no command re-run. Lap 4 went live.\n` +
        `  The save file is plain git: ${options.keep ? `cd ${repo} && git log -p agent-journal` : 'git log -p agent-journal (use --keep to look around)'}.\n`,
    );
    return 0;
  } finally {
    if (!options.keep) rmSync(base, { recursive: true, force: true });
  }
}
