// A fetched journal is input, not trust, field by field: someone with push access rewrites a
// finished run's run.json or an entry on the remote, and the person who clones it and looks at the
// run (`diff`, `show`, `log`, `runs`, `resume`) is never made to run git with an option of the
// forger's choosing, to read a huge record whole, or to have their terminal driven.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { forgeJournalJson, projectAt } from '../helpers/hostile-tree.js';
import { assertOneParagraph, runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TASK = 'write the notes';

interface Published {
  dir: string;
  root: string;
  remote: string;
  run: string;
}

// A repository at <dir>/a with a finished run (step 2 wrote notes.txt), its journal pushed to the
// bare repository <dir>/remote.git: recorded once for the file (one run of the CLI), and copied
// (`cp -a`) for each case, which forges its own copy.
let template: Promise<Published> | undefined;
async function publishedRun(): Promise<Published> {
  const recorded = await (template ??= recordPublishedRun());
  const dir = scratch.dir('savepoint-forged-');
  execFileSync('cp', ['-a', `${recorded.dir}/.`, dir]);
  return { dir, root: join(dir, 'a'), remote: join(dir, 'remote.git'), run: recorded.run };
}

async function recordPublishedRun(): Promise<Published> {
  const { dir, root } = await projectAt(() => scratch.dir('savepoint-forged-'));
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'done' }] }));
  const result = await runCli(['run', '--yes', '--model', `script:${script}`, TASK], { cwd: root });
  assert.equal(result.code, 0, result.stderr);
  const run = /run (\S+)/.exec(result.stdout)![1]!;
  const remote = join(dir, 'remote.git');
  await gitOut(dir, ['init', '-q', '--bare', remote]);
  await gitOut(root, ['push', '-q', remote, 'main', 'agent-journal']);
  return { dir, root, remote, run };
}

// Pushes the forged branch of `root` to the remote and clones the remote into <dir>/b.
async function pushAndClone(p: Published): Promise<string> {
  await gitOut(p.root, ['push', '-q', '--force', p.remote, 'agent-journal']);
  const clone = join(p.dir, 'b');
  await gitOut(p.dir, ['clone', '-q', p.remote, clone]);
  return clone;
}

describe('a forged run.json or entry is refused before git sees it', { concurrency: true }, () => {
  test('a baseCommit that reads as an option: diff stops with a clear error and writes no file', async () => {
    const p = await publishedRun();
    const target = join(p.dir, 'overwritten');
    await forgeJournalJson(p.root, `runs/${p.run}/run.json`, (run) => (run.baseCommit = `--output=${target}`));
    const clone = await pushAndClone(p);
    for (const args of [['diff', p.run], ['diff', '--stat', p.run]]) {
      const result = await runCli(args, { cwd: clone });
      assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
      assert.match(assertOneParagraph(result.stderr), /baseCommit is not an object id/);
      assert.ok(!existsSync(target), `git diff was not made to write ${target}`);
    }
  });

  test('a startCheckpoint that reads as an option: show refuses the run, log shows it as corrupt, no file is written', async () => {
    const p = await publishedRun();
    const target = join(p.dir, 'overwritten');
    await forgeJournalJson(p.root, `runs/${p.run}/run.json`, (run) => (run.startCheckpoint = `--output=${target}`));
    const clone = await pushAndClone(p);
    for (const args of [['show', p.run, '2'], ['show', '--json', p.run, '2']]) {
      const result = await runCli(args, { cwd: clone });
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}\n${result.stderr}`);
      assert.match(assertOneParagraph(result.stderr), /run\.json is corrupt: its startCheckpoint is not an object id/);
      assert.ok(!existsSync(target), `git diff was not made to write ${target}`);
    }
    const log = await runCli(['log', p.run], { cwd: clone });
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /corrupt/);
    assert.match(log.stdout, /its startCheckpoint is not an object id/);
    assert.ok(!existsSync(target));
  });

  test('fields of the wrong type in run.json and in an entry are named, not used', async () => {
    const p = await publishedRun();
    await forgeJournalJson(p.root, `runs/${p.run}/run.json`, (run) => {
      (run.attempts as Array<Record<string, unknown>>)[0]!.pid = '--upload-pack=touch /tmp/x';
    });
    let clone = await pushAndClone(p);
    let result = await runCli(['show', p.run, '2'], { cwd: clone });
    assert.equal(result.code, 1, result.stdout);
    assert.match(assertOneParagraph(result.stderr), /run\.json is corrupt: its pid is not a whole number/);

    const q = await publishedRun();
    await forgeJournalJson(q.root, `runs/${q.run}/steps/000/000001-model.json`, (entry) => {
      entry.usage = { inputTokens: 'lots', outputTokens: 1 };
    });
    clone = await pushAndClone(q);
    result = await runCli(['show', q.run, '1'], { cwd: clone });
    assert.equal(result.code, 1, result.stdout);
    assert.match(assertOneParagraph(result.stderr), /000001-model\.json \(step 1\) is corrupt: its inputTokens is not a whole number/);
    result = await runCli(['resume', '--yes', q.run], { cwd: clone });
    assert.equal(result.code, 1, result.stdout);
    assert.match(assertOneParagraph(result.stderr), /its inputTokens is not a whole number/);
  });
});

// What a terminal would act on: any ESC (a clipboard write `ESC ] 52`, a title `ESC ] 0`, cursor
// movement `ESC [ 1 A`), BEL, a C1 CSI, a bidirectional override. Output to a pipe has no colour of
// savepoint's own, so none may be there at all.
// eslint-disable-next-line no-control-regex
const ACTED_ON = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const CLIPBOARD = '\x1b]52;c;cHduZWQ=\x07';
const CURSOR_UP = '\x1b[1A\x1b[2K';

describe('the terminal is never driven from outside', { concurrency: true }, () => {
  test('a fetched journal with escapes in its task, model, description, summary and final answer: runs, log and show show them as text', async () => {
    const p = await publishedRun();
    await forgeJournalJson(p.root, `runs/${p.run}/run.json`, (run) => {
      run.task = `${TASK}${CLIPBOARD}`;
      run.model = `model${CURSOR_UP}`;
      run.final = `done\x1b]0;title\x07\u009b2J\u202eevil`;
      delete run.totals;
    });
    await forgeJournalJson(p.root, `runs/${p.run}/steps/000/000002-write_file.json`, (entry) => {
      entry.description = `write_file notes${CURSOR_UP}.txt`;
      entry.summary = `created${CLIPBOARD}`;
    });
    const clone = await pushAndClone(p);
    for (const args of [['runs', '--all'], ['log', p.run], ['show', p.run, '2']]) {
      const result = await runCli(args, { cwd: clone, env: { COLUMNS: '200' } });
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.doesNotMatch(result.stdout, ACTED_ON, `${args.join(' ')} printed a control character raw: ${JSON.stringify(result.stdout)}`);
      assert.match(result.stdout, /\^\[\]52;c;/, `${args.join(' ')} shows the escape as text`);
    }
    const log = await runCli(['log', p.run], { cwd: clone, env: { COLUMNS: '200' } });
    assert.match(log.stdout, /done\^\[\]0;title\^G<U\+009B>2J<U\+202E>evil/);
    assert.match(log.stdout, /model\^\[\[1A\^\[\[2K/);
  });

  test('a narrow terminal cuts a line with an escape in it without leaving half an escape', async () => {
    const p = await publishedRun();
    await forgeJournalJson(p.root, `runs/${p.run}/run.json`, (run) => (run.task = `${'x'.repeat(30)}${CLIPBOARD}${'y'.repeat(100)}`));
    const clone = await pushAndClone(p);
    for (const columns of ['34', '36', '40']) {
      const result = await runCli(['log', p.run], { cwd: clone, env: { COLUMNS: columns } });
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(result.stdout, ACTED_ON, `COLUMNS=${columns}: ${JSON.stringify(result.stdout)}`);
    }
  });

  test('a live run: escapes in the model text, a file name and a command output reach the terminal as text', async () => {
    const { dir, root } = await projectAt(() => scratch.dir('savepoint-escapes-'));
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { text: `look${CURSOR_UP}`, tools: [{ name: 'write_file', input: { path: `notes${CLIPBOARD}.txt`, content: 'notes\n' } }] },
          { tools: [{ name: 'run_bash', input: { command: "printf 'out\\033]52;c;eA==\\007\\n'" } }] },
          { text: `done\x1b]0;title\x07` },
        ],
      }),
    );
    const result = await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, TASK], { cwd: root, env: { COLUMNS: '200' } });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, ACTED_ON, JSON.stringify(result.stdout));
    assert.match(result.stdout, /look\^\[\[1A/);
    assert.match(result.stdout, /write_file notes\^\[\]52;c;/);
    assert.match(result.stdout, /exit 0: out\^\[\]52;c;eA==\^G/);
    assert.match(result.stdout, /done\^\[\]0;title\^G/);
  });
});
