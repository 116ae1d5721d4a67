// The rest of the lecture, as `savepoint demo --chapter past|edge`: each chapter is a temporary
// repository, a scripted model (no key), a real SIGKILL, the identical command again, a short
// explanation of what just happened and why it is right, and the `git log` that proves it.
// Tested in test/cli/demo.test.ts.
import { probeSandbox } from '../../tools/sandbox.js';
import { outputSync } from '../../os/processes.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runIdForTask } from '../../journal/run-id.js';
import { styleFor } from '../terminal/style.js';
import { createRepository, runChild } from './child.js';
import { EDGE, PAST, type Chapter } from './chapter-scripts.js';

/** The chapters by name. */
export const CHAPTERS = { past: PAST, edge: EDGE } satisfies Record<string, Chapter>;

/** A chapter's name. */
export type ChapterName = keyof typeof CHAPTERS;

/** Plays one chapter on `out`; returns the exit code (0 when it went as the lecture says). */
export async function runChapter(name: ChapterName, options: { keep: boolean; out?: NodeJS.WriteStream }): Promise<number> {
  const chapter: Chapter = CHAPTERS[name];
  const out = options.out ?? process.stdout;
  const style = styleFor(out);
  const base = mkdtempSync(join(tmpdir(), `savepoint-demo-${name}-`));
  const repo = join(base, chapter.folder);
  const script = join(base, 'demo-model.json');
  const say = (text: string) => out.write(`${text}\n`);
  const shell = (text: string) => say(style.cyan(`$ ${text}`));
  try {
    createRepository(repo, chapter.files, chapter.commit);
    writeFileSync(script, JSON.stringify(chapter.script, null, 2));
    // Where bubblewrap cannot start, the demo's commands run unconfined (they are its own, in a temporary repository).
    const unconfined = probeSandbox(repo).ok ? [] : ['--no-sandbox'];
    const args = (...extra: string[]) => ['run', '--yes', ...unconfined, ...extra, '--model', `script:${script}`, chapter.task];
    const shown = (...extra: string[]) =>
      `savepoint run --yes ${extra.map((e) => `${e} `).join('')}--model script:demo-model.json "${chapter.task}"`;
    say(`${style.bold(`savepoint demo --chapter ${name}`)}: ${chapter.title}\n`);
    say(`  ${chapter.intro}\n  Repository: ${repo}\n`);

    shell(shown());
    const first = await runChild(args(), repo, out, style, chapter.killAfterSteps, chapter.killDelayMs);
    say(style.red(`\n  ✗ kill -9 ${first.pid}: ${chapter.killedDuring}\n`));
    if (chapter.beforeResume) chapter.beforeResume({ repo, say, shell, style, run: runIdForTask(chapter.task) });
    else say('  Same command again:\n');
    shell(shown());

    let resumed = await runChild(args(), repo, out, style);
    if (resumed.code !== 0 && chapter.thenWith) {
      say(`\n${chapter.thenWith.why}\n`);
      shell(shown(...chapter.thenWith.flags));
      resumed = await runChild(args(...chapter.thenWith.flags), repo, out, style);
    }
    if (resumed.code !== 0) {
      say(style.red(`\nThe resumed run exited with code ${resumed.code}.`));
      return 1;
    }
    say(`\n${chapter.moral(style)}`);
    say(
      style.dim(
        `  The save file is plain git${options.keep ? ` (cd ${repo} && git log -p agent-journal)` : ' (--keep keeps it to look around)'}; the proof:\n`,
      ),
    );
    shell('git log --oneline agent-journal');
    out.write(outputSync('git', ['log', '--oneline', '--no-decorate', 'agent-journal'], { cwd: repo, encoding: 'utf8' }));
    return 0;
  } finally {
    if (!options.keep) rmSync(base, { recursive: true, force: true });
  }
}
