// The terminal is never driven from outside, on a real pseudo-terminal, where the live view, the
// streamed model text and colours are on: a clipboard write (OSC 52), a title (OSC 0), cursor
// movement that hides lines (CSI 7 A, erase line) and a C1 CSI, from the model's text, a command's
// output (in the live view's block and the step line), a file name and its content (`diff`), and a fetched run's task and
// final answer (`log`, `runs`; `resume`, which stops at the changed task), reach the pty only as text (`^[]52;...`). savepoint's
// own escapes (colours, its redraw) are the only ones the pty gets.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { forgeJournalJson, projectAt } from '../helpers/hostile-tree.js';
import { onPty, plain, SKIP_NO_PTY as PTY_SKIP } from '../helpers/pty.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// What must never be there raw: the OSC sequences, the forged cursor movement and erase-line (savepoint
// never writes CSI 2 K), a C1 CSI, BEL.
// eslint-disable-next-line no-control-regex
const RAW = /\x1b\]|\x1b\[7A|\x1b\[2K|\u009b|\x07/;

function assertNoRaw(out: string, context: string): void {
  const found = RAW.exec(out);
  assert.equal(found, null, `${context}: ${JSON.stringify(found?.[0])} reached the terminal raw at ${JSON.stringify(out.slice(Math.max(0, (found?.index ?? 0) - 60), (found?.index ?? 0) + 20))}`);
}

describe('on a terminal, escapes from outside are shown as text', { concurrency: true, skip: PTY_SKIP }, () => {
  test('model text, command output, a file name, and a fetched run\'s task and answer', async () => {
    const { dir, root } = await projectAt(() => scratch.dir('savepoint-pty-'));
    const model = join(dir, 'model.json');
    const output = "printf 'out\\033]52;c;eA==\\007 \\302\\2332J\\n\\033[7A\\033[2Kgone\\n'";
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          { text: 'look\x1b[7A\x1b[2K here', tools: [{ name: 'write_file', input: { path: 'notes\x1b]0;title\x07.txt', content: 'notes\x1b]52;c;cHduZWQ=\x07\x1b[7A\x1b[2K\n' } }] },
          { tools: [{ name: 'run_bash', input: { command: output } }] },
          { text: 'done\x1b]52;c;cHduZWQ=\x07' },
        ],
      }),
    );
    const live = await onPty(['run', '--yes', '--no-sandbox', '--model', `script:${model}`, 'write the notes'], root);
    assert.equal(live.code, 0, live.out);
    assertNoRaw(live.out, 'run');
    const shown = plain(live.out);
    assert.match(shown, /look\^\[\[7A\^\[\[2K here/, 'the model text, made visible');
    assert.match(shown, /write_file notes\^\[\]0;title\^G\.txt/, 'the file name');
    assert.match(shown, /│ out\^\[\]52;c;eA==\^G <U\+009B>2J/, "the command's output in the live view");
    assert.match(shown, /│ \^\[\[7A\^\[\[2Kgone/);
    assert.match(shown, /exit 0: \^\[\[7A\^\[\[2Kgone/, 'and on its step line');
    assert.match(shown, /done\^\[\]52;c;cHduZWQ=\^G/, 'the final answer');

    const run = /run (\S+)/.exec(shown)![1]!;
    const diff = await onPty(['diff', run], root, [], { env: { SAVEPOINT_PAGER: 'cat' } });
    assert.equal(diff.code, 0, diff.out);
    assertNoRaw(diff.out, 'diff');
    assert.match(plain(diff.out), /\+notes\^\[\]52;c;cHduZWQ=\^G\^\[\[7A\^\[\[2K/, "diff shows the file's escapes as text");
    await forgeJournalJson(root, `runs/${run}/run.json`, (record) => {
      record.task = `write the notes\x1b]52;c;cHduZWQ=\x07\x1b[7A\x1b[2K`;
      record.final = `done\x1b]0;title\x07\u009b2J`;
      record.status = 'running';
    });
    const remote = join(dir, 'remote.git');
    await gitOut(dir, ['init', '-q', '--bare', remote]);
    await gitOut(root, ['push', '-q', remote, 'main', 'agent-journal']);
    const clone = join(dir, 'b');
    await gitOut(dir, ['clone', '-q', '-b', 'main', remote, clone]);
    for (const args of [['runs', '--all'], ['log', run], ['resume', '--yes', '--no-sandbox', run]]) {
      const tty = await onPty(args, clone, [], { env: { SAVEPOINT_PAGER: 'cat' } });
      assertNoRaw(tty.out, args.join(' '));
      // (resume stops at step 1: the task is part of the model's first request, and it was changed.)
      if (args[0] !== 'resume') assert.match(plain(tty.out), /write the notes\^\[\]52;c;/, `${args.join(' ')} shows the task as text`);
    }
    const json = await onPty(['log', '--json', run], clone, [], { env: { SAVEPOINT_PAGER: 'cat' } });
    assertNoRaw(json.out, 'log --json');
    assert.match(json.out, /"final": "done\\u001b\]0;title\\u0007\\u009b2J"/, 'log --json escapes them in its strings');
  });
});
