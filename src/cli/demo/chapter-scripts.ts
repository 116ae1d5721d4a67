// The two chapters' repositories, scripted models and words. "past": config.py is edited by hand
// between the crash and the resume; the replayed read hands back what the model read then, drift
// names the file, and the model finds out for itself when its edit no longer fits. "edge": the run
// is killed in the middle of a command; on resume the model is told the outcome is unknown and
// checks, and the journal shows the intent with no result.
// Tested in test/cli/demo.test.ts.
import { outputSync } from '../../os/processes.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Style } from '../terminal/style.js';

/** What a chapter may do between the kill and the identical command (a person editing a file). */
export interface Interlude {
  repo: string;
  run: string;
  style: Style;
  say: (text: string) => void;
  shell: (text: string) => void;
}

/** One chapter of the lecture. */
export interface Chapter {
  title: string;
  intro: string;
  folder: string;
  commit: string;
  files: Record<string, string>;
  task: string;
  script: { model: string; turns: unknown[] };
  /** The first run is killed this long after this many step lines. */
  killAfterSteps: number;
  killDelayMs: number;
  killedDuring: string;
  beforeResume?: (at: Interlude) => void;
  /** When the identical command stops (drift), what to say and the flags of the next try. */
  thenWith?: { why: string; flags: string[] };
  moral: (style: Style) => string;
}

/** The past is read-only. */
export const PAST: Chapter = {
  title: 'the past is read-only.',
  intro:
    'A scripted model reads config.py, then is killed while deciding on an edit. A person changes config.py by hand; then the same command again.',
  folder: 'fetcher',
  commit: 'A fetcher and its settings',
  files: {
    'config.py': '# Settings for the fetcher.\nTIMEOUT = 30\nRETRIES = 3\n',
    'fetch.py':
      'from config import TIMEOUT, RETRIES\n\n\ndef fetch(url):\n    return {"url": url, "timeout": TIMEOUT, "retries": RETRIES}\n',
  },
  task: 'Double the timeout in config.py',
  script: {
    model: 'scripted-demo',
    turns: [
      { delayMs: 400, text: 'Reading the settings first.', tools: [{ name: 'read_file', input: { path: 'config.py' } }] },
      {
        delayMs: 1500,
        text: 'TIMEOUT is 30 in what I read: making it 60.',
        tools: [{ name: 'edit_file', input: { path: 'config.py', old_string: 'TIMEOUT = 30', new_string: 'TIMEOUT = 60' } }],
      },
      {
        delayMs: 300,
        text: 'That edit did not apply: config.py no longer says what I read. Reading it again.',
        tools: [{ name: 'read_file', input: { path: 'config.py' } }],
      },
      {
        delayMs: 300,
        text: 'Someone set it to 45 since. Doubling what is there now: 90.',
        tools: [{ name: 'edit_file', input: { path: 'config.py', old_string: 'TIMEOUT = 45', new_string: 'TIMEOUT = 90' } }],
      },
      { delayMs: 200, text: 'Done: TIMEOUT is 90, double the 45 set by hand. My first read (30) stays in the journal as what I saw then.' },
    ],
  },
  killAfterSteps: 2,
  killDelayMs: 400,
  killedDuring: 'the process died after reading config.py, in the middle of the model call that decides the edit.',
  beforeResume: ({ repo, say, shell, style }) => {
    say('  Meanwhile a person edits the file by hand:\n');
    shell("sed -i 's/TIMEOUT = 30/TIMEOUT = 45/' config.py");
    writeFileSync(join(repo, 'config.py'), '# Settings for the fetcher.\nTIMEOUT = 45\nRETRIES = 3\n');
    say(
      style.dim(
        '  config.py now says TIMEOUT = 45. The journal recorded the files as they were when the run started. Same command again:\n',
      ),
    );
  },
  thenWith: {
    why:
      '  savepoint refused to go on silently: the drift check names config.py. The replayed steps assume the files the\n' +
      "  run recorded; today's file differs. --restore would put the recorded file back; here we keep the hand edit:",
    flags: ['--keep-worktree'],
  },
  moral: (style) =>
    `  ${style.bold('Why this is right.')} Step #2 was handed back from the journal: the model is told config.py said\n` +
    '  TIMEOUT = 30, because that is what it read, and everything it decided after was built on that. Replaying\n' +
    "  today's file into yesterday's conversation would rewrite history the model already reasoned from. The\n" +
    '  present gets in the honest way: drift names the changed file before anything runs, and the live steps see\n' +
    '  the file as it is (the edit built on 30 failed, the model read again and found 45). The past is read-only.',
};

/** The honest edge. */
export const EDGE: Chapter = {
  title: 'the honest edge.',
  intro:
    'A scripted model starts publishing a release, a command that takes a few seconds. It is killed in the middle of it; then the same command again.',
  folder: 'release',
  commit: 'Release notes for v1.2',
  files: { 'NOTES.md': '# v1.2\n\n- Faster totals.\n' },
  task: 'Publish release v1.2',
  script: {
    model: 'scripted-demo',
    turns: [
      {
        delayMs: 400,
        text: 'Publishing v1.2 (it takes a few seconds).',
        tools: [
          { name: 'run_bash', input: { command: "echo 'publishing v1.2' >> publish.log; sleep 4; echo 'published v1.2' >> publish.log" } },
        ],
      },
      {
        delayMs: 400,
        text: 'The publish command was cut off: its outcome is unknown, so I will not run it blindly again. Checking publish.log.',
        tools: [{ name: 'read_file', input: { path: 'publish.log' } }],
      },
      {
        delayMs: 300,
        text: 'publish.log says "publishing v1.2" and never "published": the publish started and did not finish. I did not run it again; v1.2 is not published. Re-run the publish when you are ready.',
      },
    ],
  },
  killAfterSteps: 1,
  killDelayMs: 1500,
  killedDuring:
    'the process and its publish command died in the middle of it, as in a power cut (the intent is in the journal, the result never will be).',
  beforeResume: ({ repo, say, shell, style, run }) => {
    shell('git log --oneline agent-journal');
    say(gitLog(repo));
    say(style.dim(`  ${run} #2 has an intent ("started") and no result: nobody knows whether the publish happened. Same command again:\n`));
  },
  moral: (style) =>
    `  ${style.bold('Why this is right.')} A command that was running when the process died may have done all, some or\n` +
    '  none of its work. Running it again could publish twice; pretending it finished would be a lie. So savepoint\n' +
    '  does neither: step #2 is answered "outcome unknown, not re-run", and the model checks the world for itself.\n' +
    '  The journal keeps the intent (started) and the honest answer recorded on resume, never a made-up result.',
};

function gitLog(repo: string): string {
  return outputSync('git', ['log', '--oneline', '--no-decorate', 'agent-journal'], { cwd: repo, encoding: 'utf8' }).trimEnd();
}
