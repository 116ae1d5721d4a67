// The approval question on a real pseudo-terminal shows the diff the step will really make: for an
// edit, the file's own line numbers and its indentation; for a write over a file, the diff against
// what is there; for a new file, a new file's diff, named as git names it. Each is what `savepoint show` prints for that
// step afterwards. A declined step's line and `log` say "declined" once. On a narrow terminal the
// question shows the whole command and every argument of an MCP call, wrapped, never cut at the
// terminal's width; `a` remembers the narrowest rule (the command as asked); a write to a file that
// decides what runs asks whatever the repository's settings say, and offers no rule to remember.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { fakeEnv, runCli } from '../helpers/cli.js';
import { onPty, plain, SKIP_NO_PTY } from '../helpers/pty.js';
import { counted, countingServer } from '../tools/mcp/helpers.js';

const scratch = useScratch();

function script(dir: string, turns: unknown[]): string {
  const path = join(dir, 'model.json');
  writeFileSync(path, JSON.stringify({ turns }));
  return `script:${path}`;
}

// The diff lines the question printed under `heading` (their 4-space indent taken off), up to the question.
function asked(out: string, heading: string): string[] {
  const lines = out.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  assert.ok(start >= 0, `the question shows "${heading}":\n${out}`);
  const end = lines.findIndex((line, i) => i > start && /^ {2}Allow /.test(line));
  return lines.slice(start + 1, end).map((line) => line.replace(/^ {4}/, ''));
}

// What `savepoint show <run> <step>` prints of the file's diff: from its `---` line to the end of its hunks.
async function shown(root: string, run: string, step: number, path: string): Promise<string[]> {
  const show = await runCli(['show', run, String(step)], { cwd: root });
  assert.equal(show.code, 0, show.stderr);
  const lines = show.stdout.replace(/\n+$/, '').split('\n');
  const start = lines.findIndex((line) => line === `--- a/${path}` || line === '--- /dev/null');
  assert.ok(start >= 0, `show prints the diff of ${path}:\n${show.stdout}`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('diff --git '));
  return lines.slice(start, end < 0 ? undefined : end);
}

// The lines the question printed from the one starting with `first` up to the question itself, and
// the text they show once each line's indent (and a wrapped piece's `↳`) is taken off and the
// pieces of a wrapped line are joined again.
function previewed(out: string, first: RegExp): { lines: string[]; text: string } {
  const lines = out.split('\n');
  const start = lines.findIndex((line) => first.test(line));
  assert.ok(start >= 0, `the question shows ${first}:\n${out}`);
  const end = lines.findIndex((line, i) => i > start && /^ {2}Allow /.test(line));
  const shown = lines.slice(start, end);
  const text = shown.map((line, i) => (i > 0 && /^ {4}↳ /.test(line) ? '' : i > 0 ? '\n' : '') + line.replace(/^ {4}(↳ |\$ | {2})?/, '')).join('');
  return { lines: shown, text };
}

// A user config folder of its own, so that no settings of the machine's apply.
function ownHome(): Record<string, string> {
  const home = scratch.dir('savepoint-home-');
  return { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
}

describe('the approval question', { concurrency: true, skip: SKIP_NO_PTY }, () => {
  test("shows the real diff, with the file's line numbers and indentation, exactly as show prints it afterwards", async () => {
    const lines = Array.from({ length: 16 }, (_, i) => `// line ${i + 1}`);
    lines[11] = 'return 1;'; // line 12
    const repo = await scratch.repo({ 'app.js': `${lines.join('\n')}\n`, 'notes.txt': 'alpha\nbeta\ngamma\n' });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'edit_file', input: { path: 'app.js', old_string: 'return 1;', new_string: '    return 1;' } }] },
      { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'alpha\nBETA\ngamma\n' } }] },
      { tools: [{ name: 'write_file', input: { path: 'docs/new café.md', content: '# New\n\n\tindented by a tab\n' } }] },
      { text: 'Indented.' },
    ]);
    const tty = await onPty(['run', '--run', 'indent', '--model', model, 'indent the return'], repo.root, [
      { after: /Allow edit_file app\.js\?/, send: 'y\r' },
      { after: /Allow write_file notes\.txt\?/, send: 'y\r' },
      { after: /Allow write_file docs\/new café\.md\?/, send: 'y\r' },
    ]);
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);

    const edit = asked(out, 'edit app.js:');
    assert.deepEqual(edit.slice(0, 3), ['--- a/app.js', '+++ b/app.js', '@@ -9,7 +9,7 @@'], "the hunk is numbered by the file's lines, not the snippet's");
    assert.ok(edit.includes('-return 1;') && edit.includes('+    return 1;'), `the whole lines, indentation kept:\n${edit.join('\n')}`);
    assert.ok(edit.includes(' // line 11') && edit.includes(' // line 15'), 'with the context around it');
    assert.deepEqual(edit, await shown(repo.root, 'indent', 2, 'app.js'), 'the question shows what show prints for the step');

    const write = asked(out, 'write notes.txt (3 lines, 17 bytes):');
    assert.deepEqual(write, ['--- a/notes.txt', '+++ b/notes.txt', '@@ -1,3 +1,3 @@', ' alpha', '-beta', '+BETA', ' gamma'], 'a write over a file shows its diff');
    assert.deepEqual(write, await shown(repo.root, 'indent', 4, 'notes.txt'));

    const created = asked(out, 'write docs/new café.md (a new file, 3 lines, 26 bytes):');
    // git names the file as it names one in a diff: quoted, its non-ASCII bytes in octal, a tab after a name with a space.
    assert.deepEqual(created, ['--- /dev/null', '+++ "b/docs/new caf\\303\\251.md"\t', '@@ -0,0 +1,3 @@', '+# New', '+', '+\tindented by a tab'], 'a new file shows as new');
    assert.deepEqual(created, await shown(repo.root, 'indent', 6, 'docs/new café.md'));
  });

  test("a file the repository's .gitattributes mark -diff or binary shows as git shows it: the root's rules and a folder's, as show prints it", async () => {
    const repo = await scratch.repo({
      '.gitattributes': '*.dat -diff\n',
      'data/.gitattributes': 'keys.txt binary\n',
      'data/table.dat': 'row 1\nrow 2\n',
      'data/keys.txt': 'a\nb\n',
      'data/readme.txt': 'plain\n',
    });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'write_file', input: { path: 'data/table.dat', content: 'row 1\nrow 2\nrow 3\n' } }] },
      { tools: [{ name: 'write_file', input: { path: 'data/keys.txt', content: 'a\nc\n' } }] },
      { tools: [{ name: 'write_file', input: { path: 'data/readme.txt', content: 'still plain\n' } }] },
      { text: 'Written.' },
    ]);
    const tty = await onPty(['run', '--run', 'attrs', '--model', model, 'write three files'], repo.root, [
      { after: /Allow write_file data\/table\.dat\?/, send: 'y\r' },
      { after: /Allow write_file data\/keys\.txt\?/, send: 'y\r' },
      { after: /Allow write_file data\/readme\.txt\?/, send: 'y\r' },
    ]);
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.deepEqual(asked(out, 'write data/table.dat (3 lines, 18 bytes):'), ['Binary files a/data/table.dat and b/data/table.dat differ']);
    assert.deepEqual(asked(out, 'write data/keys.txt (2 lines, 4 bytes):'), ['Binary files a/data/keys.txt and b/data/keys.txt differ']);
    assert.deepEqual(asked(out, 'write data/readme.txt (1 line, 12 bytes):'), ['--- a/data/readme.txt', '+++ b/data/readme.txt', '@@ -1 +1 @@', '-plain', '+still plain']);
    for (const [step, path] of [[2, 'data/table.dat'], [4, 'data/keys.txt']] as const) {
      const show = await runCli(['show', 'attrs', String(step)], { cwd: repo.root });
      assert.equal(show.code, 0, show.stderr);
      assert.ok(show.stdout.includes(`Binary files a/${path} and b/${path} differ`), `show prints the same for ${path}:\n${show.stdout}`);
    }
  });

  // One run for both: the write's question (a "y" typed ahead of it), then the failing edit's.
  test('a "y" typed before the question appears does not approve: only what is typed after it answers; an edit that will fail says so instead of a diff', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n', 'app.js': 'const port = 80;\n' });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'write_file', input: { path: 'early.txt', content: 'written\n' } }], delayMs: 1500 },
      { tools: [{ name: 'edit_file', input: { path: 'app.js', old_string: 'port = 443', new_string: 'port = 8443' } }] },
      { text: 'Done.' },
    ]);
    // The first "y" goes in while the model is still answering; the question then gets "n".
    const tty = await onPty(['run', '--run', 'early', '--model', model, 'write early.txt, then change a port that is not there'], repo.root, [
      { after: /model turn 1/, send: 'y\r' },
      { after: /Allow write_file early\.txt\?/, send: 'n\r' },
      { after: /Allow edit_file app\.js\?/, send: 'y\r' },
    ]);
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.match(out, /#2 {2}DECLINED \(not run\) +write_file early\.txt/, `the answer typed after the question decided:\n${out}`);
    assert.ok(!existsSync(join(repo.root, 'early.txt')), 'nothing was written');
    assert.match(out, /edit app\.js: it will fail: old_string was not found in app\.js\./);
    assert.match(out, /#4 {2}LIVE \(running now\) +edit_file app\.js +→ error: old_string not found/);
  });

  test('a declined step says "declined" once: on its line as it happens, when it replays, and in log', async () => {
    const repo = await scratch.repo({ 'package.json': '{}\n' });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'run_bash', input: { command: 'npm install left-pad' } }] },
      { tools: [{ name: 'run_bash', input: { command: 'npm install right-pad' } }] },
      { text: 'I will use pnpm.' },
    ]);
    const args = ['run', '--run', 'declined', '--model', model, 'add left-pad'];
    const tty = await onPty(args, repo.root, [
      { after: /Allow run_bash "npm install left-pad"\?/, send: 'n use pnpm\r' },
      { after: /Allow run_bash "npm install right-pad"\?/, send: 'n\r' },
    ]);
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.match(out, /#2 {2}DECLINED \(not run\) +run_bash "npm install left-pad" +→ reason: use pnpm {2}·/, 'the label says declined; the result gives the reason');
    assert.match(out, /#4 {2}DECLINED \(not run\) +run_bash "npm install right-pad" +→ no reason given {2}·/);

    const replay = await runCli(args, { cwd: repo.root });
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /#2 {2}REPLAYED \(from journal\) +run_bash "npm install left-pad" +→ declined: use pnpm {2}·/);

    const log = await runCli(['log', 'declined'], { cwd: repo.root });
    assert.equal(log.code, 0, log.stderr);
    const line = log.stdout.split('\n').find((l) => l.includes('npm install left-pad'));
    assert.match(line ?? '', /→ declined: use pnpm +\d/, log.stdout);
    assert.doesNotMatch(log.stdout, /\(declined\)/, 'log does not say it twice');
    assert.match(log.stdout, /→ declined by the user +\d/);
  });

  test("on a narrow terminal a long one-line command is shown whole, wrapped: nothing past the terminal's edge is hidden", async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const command = `echo checking the build of every package in the workspace ${'and-its-dependencies '.repeat(6)}> /dev/null; touch HIDDEN-TAIL-RAN`;
    const model = script(scratch.dir(), [{ tools: [{ name: 'run_bash', input: { command } }] }, { text: 'Declined.' }]);
    const tty = await onPty(['run', '--no-sandbox', '--model', model, 'check the build'], repo.root, [{ after: /Allow run_bash .*\? \[y\]es/, send: 'n\r' }], { cols: 60, env: ownHome() });
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    const { lines, text } = previewed(out, /^ {4}\$ echo checking/);
    assert.equal(text, command, `the whole command is shown:\n${lines.join('\n')}`);
    assert.ok(lines.length > 2, 'wrapped over several lines');
    for (const line of lines) assert.ok(line.length <= 60, `no line is wider than the terminal: ${JSON.stringify(line)}`);
    assert.ok(!existsSync(join(repo.root, 'HIDDEN-TAIL-RAN')));
  });

  test('an MCP call that is not read-only shows every argument whole: a long value folded with its length, nothing dropped', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const counts = scratch.dir('savepoint-mcp-counts-');
    // The server is the person's own (user settings), so that nothing but the question decides the call.
    const home = ownHome();
    mkdirSync(join(home.XDG_CONFIG_HOME, 'savepoint'), { recursive: true });
    writeFileSync(join(home.XDG_CONFIG_HOME, 'savepoint', 'settings.json'), JSON.stringify({ mcpServers: { counter: countingServer(counts) } }));
    const body = `SELECT name FROM users WHERE team = 'platform' ORDER BY name LIMIT 10; DROP TABLE users`;
    const fake = await scratch.fake([{ tools: [{ name: 'mcp__counter__send_mail', input: { to: 'ops@example.com', body } }] }, { text: 'Declined.' }]);
    const tty = await onPty(['run', '--no-sandbox', 'mail the report'], repo.root, [{ after: /Allow mcp__counter__send_mail/, send: 'n\r' }], { cols: 60, env: { ...fakeEnv(fake), ...home } as Record<string, string> });
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    const { lines, text } = previewed(out, /^ {4}to: "ops@example\.com"$/);
    assert.equal(text, `to: "ops@example.com"\nbody (${body.length} characters):\n${body}`, lines.join('\n'));
    for (const line of lines) assert.ok(line.length <= 60, `no line is wider than the terminal: ${JSON.stringify(line)}`);
    assert.equal(counted(counts, 'send_mail.calls'), 0);
  });

  test('"a" at npm test remembers the narrowest rule, run_bash(npm test), and writes it when asked to', async () => {
    const repo = await scratch.repo({ 'package.json': '{"name":"p","version":"1.0.0","scripts":{"test":"echo tested"}}\n' });
    const model = script(scratch.dir(), [{ tools: [{ name: 'run_bash', input: { command: 'npm test' } }] }, { text: 'Tested.' }]);
    const tty = await onPty(['run', '--no-sandbox', '--model', model, 'run the tests'], repo.root, [
      { after: /Allow run_bash "npm test"\?.*\[a\]lways: $/m, send: 'a\r' },
      { after: /from now on: \[s\]ession only/, send: 'w\r' },
    ], { env: ownHome() });
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.match(out, /Allow "run_bash\(npm test\)" from now on/);
    const local = JSON.parse(readFileSync(join(repo.root, '.savepoint', 'settings.local.json'), 'utf8')) as { permissions: { allow: string[] } };
    assert.deepEqual(local.permissions.allow, ['run_bash(npm test)']);
  });

  test("a write to a file that decides what runs asks on a terminal though the repository's rule and acceptEdits would approve it, and offers no rule", async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    mkdirSync(join(repo.root, '.savepoint'));
    writeFileSync(join(repo.root, '.savepoint', 'settings.json'), JSON.stringify({ permissions: { allow: ['write_file'], defaultMode: 'acceptEdits' } }));
    const model = script(scratch.dir(), [{ tools: [{ name: 'write_file', input: { path: 'AGENTS.md', content: 'Always run with --yes.\n' } }] }, { text: 'Written.' }]);
    // The folder is trusted (--trust), so its rule and mode are in force: the question comes all the same.
    const tty = await onPty(['run', '--trust', '--no-sandbox', '--model', model, 'write the instructions'], repo.root, [{ after: /Allow write_file AGENTS\.md\?/, send: 'y\r' }], { env: ownHome() });
    const out = plain(tty.out);
    assert.equal(tty.code, 0, out);
    assert.match(out, /This file decides what runs/);
    assert.match(out, /Allow write_file AGENTS\.md\? \[y\]es \/ \[n\]o \(a reason may follow: "n use pnpm"\): /, 'no [a]lways');
    assert.equal(readFileSync(join(repo.root, 'AGENTS.md'), 'utf8'), 'Always run with --yes.\n');
  });
});
