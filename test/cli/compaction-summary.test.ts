// Compaction never forgets: a summary call that answers with a tool call or nothing is asked again
// once, then the run stops saying so, the turns kept and nothing replaced; a summary that comes on
// the second asking is used, and the step line says what it kept. In a real pseudo-terminal (tmux)
// with `/compact`, and with `run` near the context window, against the fake Anthropic server: the
// requests and the journal are the judge.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isCompactionRequest } from '../../src/model/compaction.js';
import { turnIndex } from '../../src/model/script-turn.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertToolPairing, fakeEnv, journalJson, journalPaths, runCli, runIds } from '../helpers/cli.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

const READ = { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] };
// Three reads, then an answer; a message about the compaction is answered on its own.
const script = (body: MessagesBody): ScriptTurn => {
  if (JSON.stringify(body.messages.at(-1)).includes('after compacting')) return { text: 'After the compaction.' };
  return turnIndex(body.messages) < 3 ? READ : { text: 'Read three times.' };
};

const compactRequests = (requests: MessagesBody[]) => requests.filter((r) => isCompactionRequest(r.messages));

async function compactResults(root: string): Promise<Array<{ summary: string; unusable?: string[] }>> {
  const paths = (await journalPaths(root)).filter((p) => /-compact\.json$/.test(p));
  return Promise.all(paths.map(async (p) => (await journalJson<{ result: { summary: string; unusable?: string[] } }>(root, p)).result));
}

describe('a summary that is no summary', { concurrency: true }, () => {
  test('/compact whose summary call answers with a tool call twice stops saying so: nothing replaced, the next message sends every turn', async () => {
    const repo = await scratch.repo({ 'README.md': '# compact\n' });
    const fake = await scratch.fake(script, undefined, { summaries: [{ tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Let me look.', tools: [{ name: 'list_files', input: {} }] }] });
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('read it three times');
    await term.waitFor(/answers "Read three times\."[\s\S]*^›\s*$/m);
    const before = fake.requests.length;
    const full = fake.requests.at(-1)!.messages.length;
    term.type('/compact');
    const screen = await term.waitFor(/ESUMMARY|stopped before compacting[\s\S]*^›\s*$/m);
    assert.match(screen.replace(/\n/g, ' '), /asked twice for a summary of it and answered with a call of read_file, then a call of list_files, not a summary\. Nothing was replaced/);
    assert.match(screen, /not compacted: asked twice/);
    assert.equal(compactRequests(fake.requests).length, 2, 'asked once more, then no more');
    assert.equal(fake.requests.length, before + 2);
    assert.equal(fake.requests.filter((r) => !isCompactionRequest(r.messages)).length, before, 'no tool of the summary call ran, no turn was asked');

    term.type('after compacting, answer');
    await term.waitFor(/answers "After the compaction\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    const last = fake.requests.at(-1)!;
    assert.equal(last.messages.length, full + 2, 'every turn is sent: the answer and the new message added, nothing summarized');
    assert.doesNotMatch(JSON.stringify(last.messages), /Summary of the earlier conversation/);
    const [result] = await compactResults(repo.root);
    assert.deepEqual(result!.unusable, ['a call of read_file', 'a call of list_files']);
    assert.equal(result!.summary, '');
    assertToolPairing(fake.requests.filter((r) => !isCompactionRequest(r.messages)));

    // Replayed, the recorded step keeps the turns and asks nothing.
    const sent = fake.requests.length;
    const replay = await runCli(['resume', (await runIds(repo.root))[0]!], { cwd: repo.root, env });
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /Final answer\nAfter the compaction\./);
    assert.equal(fake.requests.length, sent);
  });

  test('/compact whose summary call answers nothing, then a summary: the summary is used, and its step line says what it kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# compact\n' });
    const fake = await scratch.fake(script, undefined, { summaries: [{}], summary: 'The task: read README.md three times. Done: read it three times; it is one line.' });
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('read it three times');
    await term.waitFor(/answers "Read three times\."[\s\S]*^›\s*$/m);
    term.type('/compact');
    const screen = await term.waitFor(/compact: asked for +→ [\d,]+ → [\d,]+ tokens \(estimated\): "The task/);
    assert.doesNotMatch(screen, /ESUMMARY|stopped before compacting/);
    assert.equal(compactRequests(fake.requests).length, 2, 'the empty answer was asked again');
    term.type('after compacting, answer');
    await term.waitFor(/answers "After the compaction\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assert.match(JSON.stringify(fake.requests.at(-1)!.messages[0]), /The task: read README\.md three times/);
    const [result] = await compactResults(repo.root);
    assert.match(result!.summary, /^The task: read README\.md/);
    const step = await journalJson<{ summary: string }>(repo.root, (await journalPaths(repo.root)).find((p) => /-compact\.json$/.test(p))!);
    assert.match(step.summary, /^[\d,]+ → [\d,]+ tokens \(estimated\): "The task: read README\.md three…" \(80 characters\) for \d+ messages$/);
    assert.equal(result!.unusable, undefined);
  });

  test('run near the context window: an empty summary twice stops the run with ESUMMARY and replaces nothing; the same command again goes on', async () => {
    const repo = await scratch.repo({ 'README.md': `${'# a long line of a readme '.repeat(40)}\n` });
    const fake = await scratch.fake(script, undefined, { summaries: [{}, {}] });
    const env = fakeEnv(fake);
    const run = await runCli(['run', '--yes', '--context-window', '2000', 'read it three times'], { cwd: repo.root, env });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr.replace(/\n/g, ' '), /answered with nothing, then nothing, not a summary\. Nothing was replaced/);
    assertNoStack(run.stderr);
    assert.equal(compactRequests(fake.requests).length, 2);
    assert.ok(fake.requests.every((r) => !/Summary of the earlier conversation/.test(JSON.stringify(r.messages))), 'no request carries an empty summary');

    const again = await runCli(['run', '--yes', '--context-window', '2000', 'read it three times'], { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /Final answer\nRead three times\./);
    for (const request of fake.requests.filter((r) => !isCompactionRequest(r.messages))) {
      assert.doesNotMatch(JSON.stringify(request.messages), /compacted by savepoint[^"]*\\n\\n"/, 'no summary block is empty');
    }
    const results = await compactResults(repo.root);
    assert.deepEqual(results[0]!.unusable, ['nothing', 'nothing']);
  });
});
