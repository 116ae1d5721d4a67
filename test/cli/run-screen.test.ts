// What a run prints, on a real pseudo-terminal and in a pipe: the header fits a narrow terminal
// with a long run id (broken, never cut); a replayed model turn shows what the model said, as a
// live one does; the final answer is printed once (streamed on a terminal; under "Final answer" in
// a pipe and in a replay; in --json, the `final` event).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { runCli } from '../helpers/cli.js';
import { onPty, plain, SKIP_NO_PTY } from '../helpers/pty.js';
import { displayWidth } from '../../src/format/text.js';

const scratch = useScratch();

function script(dir: string, turns: unknown[]): string {
  const path = join(dir, 'model.json');
  writeFileSync(path, JSON.stringify({ turns }));
  return `script:${path}`;
}

// The lines a terminal shows: what is drawn after a carriage return overwrites the line (the live
// view redraws its block that way), colours and cursor moves taken out.
function screenLines(out: string): string[] {
  return out
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    .split('\n')
    .map((line) => line.replace(/\r+$/, ''))
    .map((line) => line.slice(line.lastIndexOf('\r') + 1));
}

const count = (text: string, part: string) => text.split(part).length - 1;

const SAID = 'Let me read the README first, then answer.';
const ANSWER = 'The README holds one heading, and nothing else worth saying about it.';
const TURNS = [
  { text: `${SAID} \u001b]0;title\u0007`, tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: ANSWER },
];

describe('the run on the screen', { concurrency: true, skip: SKIP_NO_PTY }, () => {
  test('with COLUMNS=40 and a long task, no line is wider than 40 columns, and the header gives the whole run id', async () => {
    const repo = await scratch.repo({ 'README.md': '# narrow\n' });
    const model = script(scratch.dir(), TURNS);
    const task = 'please read the readme file and tell me everything that it says, in great detail';
    const tty = await onPty(['run', '--yes', '--model', model, task], repo.root, [], { cols: 40 });
    assert.equal(tty.code, 0, plain(tty.out));
    const lines = screenLines(tty.out);
    for (const line of lines) assert.ok(displayWidth(line) <= 40, `${displayWidth(line)} columns > 40: "${line}"\n${lines.join('\n')}`);
    // The id is broken over the header's lines, never cut: joined, it is the run's id.
    const start = lines.findIndex((line) => line.startsWith('savepoint  run '));
    const end = lines.findIndex((line, i) => i > start && line.startsWith('  model '));
    const id = lines.slice(start, end).map((line, i) => (i === 0 ? line.slice('savepoint  run '.length) : line.trim())).join('');
    assert.match(id, /^please-read-the-readme-file-and-tell-me-[0-9a-f]{6}$/);
    const show = await runCli(['show', id, '1'], { cwd: repo.root });
    assert.equal(show.code, 0, `the header's id is the run's: ${show.stderr}`);
  });

  test('a replayed model turn shows what the model said, on one line with controls visible, as a live one does', async () => {
    const repo = await scratch.repo({ 'README.md': '# replay\n' });
    const model = script(scratch.dir(), TURNS);
    const args = ['run', '--yes', '--model', model, 'read the readme'];
    const piped = await runCli(args, { cwd: repo.root });
    assert.equal(piped.code, 0, piped.stderr);
    const said = `      ${SAID} ^[]0;title^G\n`;
    assert.ok(piped.stdout.includes(`${said}  #1  LIVE (running now)`), `a live turn in a pipe: one line above its step\n${piped.stdout}`);

    const replay = await onPty(args, repo.root);
    const out = plain(replay.out);
    assert.equal(replay.code, 0, out);
    assert.ok(out.includes(`${said}  #1  REPLAYED (from journal)`), `the replayed turn says it too\n${out}`);
    assert.doesNotMatch(replay.out, /\x1b\]0;title/, 'the escape in the text never reaches the terminal');
    assert.ok(out.includes(`Final answer\n${ANSWER}\n`), 'a replayed answer is printed under "Final answer"');
    assert.equal(count(out, ANSWER), 1, `the replayed answer once\n${out}`);
  });

  test('a live final answer is printed once: streamed on a terminal, under "Final answer" in a pipe, in the final event with --json', async () => {
    const repo = await scratch.repo({ 'README.md': '# once\n' });
    const model = script(scratch.dir(), TURNS);

    const tty = await onPty(['run', '--yes', '--model', model, 'read it on a terminal'], repo.root);
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.equal(count(out.replace(/\n {6}/g, ' '), ANSWER), 1, `streamed, and not again\n${out}`);
    assert.ok(out.includes(SAID), 'the turn before it streamed too');
    assert.doesNotMatch(out, /Final answer/);
    assert.match(out, /#3 {2}LIVE \(running now\) +model turn 2 +→ answers "The README/);

    const piped = await runCli(['run', '--yes', '--model', model, 'read it in a pipe'], { cwd: repo.root });
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(count(piped.stdout, ANSWER), 1, piped.stdout);
    assert.ok(piped.stdout.includes(`Final answer\n${ANSWER}\n`), piped.stdout);

    const json = await runCli(['run', '--yes', '--json', '--model', model, 'read it as JSON'], { cwd: repo.root });
    assert.equal(json.code, 0, json.stderr);
    const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; final?: string; text?: string });
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => e.final), [ANSWER]);
    assert.ok(events.some((e) => e.type === 'text' && e.text?.includes('nothing else')), 'the text as it streamed');
    assert.doesNotMatch(json.stderr, /Final answer/);
    assert.equal(count(json.stderr, ANSWER), 0, 'the people on stderr see the steps, the answer is on stdout');
  });
});
