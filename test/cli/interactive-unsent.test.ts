// What the person typed in an interactive session and did not send survives the session's end
// (src/cli/interactive/unsent.ts): in a real pseudo-terminal (tmux), the line at the prompt when
// SIGHUP or SIGTERM comes, the lines typed ahead during a turn when a signal, /exit or a second
// Ctrl-C ends the session, each kept in .git/savepoint/unsent/ (fsynced), said where while the
// terminal is there, and told of by the next session here, whose history holds them (the up arrow).
// A line cleared with Ctrl-C is not sent and not kept, but the up arrow brings it back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, gitOut } from '../helpers/cli.js';
import { exited, openSession, type Terminal } from '../helpers/tmux.js';
import { fakeTerminal } from '../helpers/fake-terminal.js';
import { SessionPrompt } from '../../src/cli/interactive/prompt.js';
import { keepUnsent, keptLine, restoredLine, takeUnsent, UNSENT_LIMIT_BYTES } from '../../src/cli/interactive/unsent.js';

const scratch = useScratch();

// The files of unsent text kept in the repository at `root`, each as written.
function keptFiles(root: string): Array<{ name: string; record: { texts: string[]; cut?: unknown } }> {
  const dir = join(root, '.git', 'savepoint', 'unsent');
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  return names.sort().map((name) => ({ name, record: JSON.parse(readFileSync(join(dir, name), 'utf8')) as { texts: string[] } }));
}

// A session on a scripted model whose first turn waits in a command until the session ends.
async function sessionInALongTurn(): Promise<{ term: Terminal; root: string }> {
  const repo = await scratch.repo({ 'README.md': '# unsent\n' });
  const script = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(
    script,
    JSON.stringify({
      turns: [{ text: 'Waiting.', tools: [{ name: 'run_bash', input: { command: 'echo started; sleep 600' } }] }, { text: 'Never asked.' }],
    }),
  );
  const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', `script:${script}`], { cwd: repo.root });
  await term.waitFor(/^›\s*$/m);
  term.type('wait for it');
  await term.waitFor(/started/);
  return { term, root: repo.root };
}

describe('unsent text, kept when the session ends', { concurrency: true }, () => {
  for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
    test(`${signal} with a line typed at the prompt and not sent: kept in .git/savepoint/unsent/${signal === 'SIGHUP' ? ', and the next session tells of it and has it in its history' : ', said where'}`, async () => {
      const repo = await scratch.repo({ 'README.md': '# unsent\n' });
      const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root });
      await term.waitFor(/^›\s*$/m);
      term.keys('-l', 'rename the helper and keep its tests');
      await term.waitFor(/^› rename the helper and keep its tests\s*$/m);
      term.signal(signal);
      assert.equal(await exited(term), 130, term.screen());
      const screen = term.screen();
      assertNoStack(screen);
      const files = keptFiles(repo.root);
      assert.equal(files.length, 1, `one file: ${files.map((f) => f.name).join(', ')}`);
      assert.deepEqual(files[0]!.record.texts, ['rename the helper and keep its tests']);
      const said =
        /Not sent, kept: "rename the helper and keep its tests" in (\.git\/savepoint\/unsent\/\S+\.json) \(the next session here brings it back with the up arrow\)\./;
      // SIGHUP is the terminal closing: nothing is said there; SIGTERM leaves it, so it says where.
      if (signal === 'SIGTERM') assert.equal(said.exec(screen)?.[1], `.git/savepoint/unsent/${files[0]!.name}`, screen);
      else assert.doesNotMatch(screen, /Not sent/);
      if (signal === 'SIGTERM') return; // the next session is the same after either

      // The next session here says so in one line, and the up arrow brings the text back (once:
      // takeUnsent's own test below).
      const next = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root });
      const opened = await next.waitFor(/^›\s*$/m);
      assert.match(
        opened,
        new RegExp(
          `^ {2}Not sent when the last session here ended: "rename the helper and keep its tests", kept in \\.git/savepoint/unsent/${files[0]!.name}; the up arrow brings it back\\.$`,
          'm',
        ),
      );
      next.keys('Up');
      await next.waitFor(/^› rename the helper and keep its tests\s*$/m);
      next.keys('C-u', 'C-d');
      assert.equal(await exited(next), 0, next.screen());
      assert.equal(keptFiles(repo.root).length, 1, 'nothing new to keep');
    });
  }

  test('the terminal closed under a line typed at the prompt (its window shut: tmux gone): the line is kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# unsent\n' });
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root });
    await term.waitFor(/^›\s*$/m);
    term.keys('-l', 'typed in a window that is then shut');
    await term.waitFor(/^› typed in a window that is then shut\s*$/m);
    term.close();
    // Nothing is left to show the end: the file is what tells.
    const deadline = Date.now() + 60_000;
    while (!keptFiles(repo.root).length) {
      assert.ok(Date.now() < deadline, 'the line was kept');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(keptFiles(repo.root)[0]!.record.texts, ['typed in a window that is then shut']);
  });

  for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
    test(`${signal} at a question of a turn, with a message and half a line typed during the turn: both kept${signal === 'SIGTERM' ? ', said where' : ''}`, async () => {
      const repo = await scratch.repo({ 'README.md': '# unsent\n' });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const fake = await scratch.fake(
        [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'noted\n' } }] }, { text: 'Never asked.' }],
        undefined,
        {
          gate: (index) => (index === 0 ? released : undefined),
        },
      );
      // No --yes: the write asks, and the question takes what was typed before it off the terminal.
      const term = openSession(scratch, ['--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
      await term.waitFor(/^›\s*$/m);
      term.type('write the notes');
      while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
      term.type('then add a test for the notes');
      term.keys('-l', 'and half of a third');
      term.screen(); // tmux handles its commands in order: the keys are in the terminal's input now
      release();
      await term.waitFor(/Allow write_file notes\.txt\?.*$/m);
      term.signal(signal);
      assert.equal(await exited(term), 130, term.screen());
      const screen = term.screen();
      assertNoStack(screen);
      const files = keptFiles(repo.root);
      assert.equal(files.length, 1);
      assert.deepEqual(files[0]!.record.texts, ['then add a test for the notes', 'and half of a third']);
      const said = /^ {2}Not sent, kept: "then add a test for the notes" and 1 more message in \.git\/savepoint\/unsent\/\S+\.json /m;
      if (signal === 'SIGTERM') assert.match(screen, said);
      else assert.doesNotMatch(screen, /Not sent/);
      assert.ok(!existsSync(join(repo.root, 'notes.txt')), 'the question was not answered by what was typed before it');
    });
  }

  test('/exit typed ahead during a turn, with a message after it: the session leaves (exit 0) and the message is kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# unsent\n' });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const fake = await scratch.fake([{ text: 'First answer.' }, { text: 'Never asked.' }], undefined, {
      gate: (index) => (index === 0 ? released : undefined),
    });
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
    await term.waitFor(/^›\s*$/m);
    term.type('first');
    while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    term.type('/exit');
    term.type('a message typed after /exit');
    term.screen();
    release();
    assert.equal(await exited(term), 0, term.screen());
    assert.equal(fake.requests.length, 1, 'the message was not sent');
    assert.deepEqual(keptFiles(repo.root)[0]?.record.texts, ['a message typed after /exit']);
    assert.match(term.screen(), /^ {2}Not sent, kept: "a message typed after \/exit" in \.git\/savepoint\/unsent\/\S+\.json /m);
  });

  test("SIGTERM during a new run's first model call, before the run exists: its task was never recorded, so it is kept; a follow-up, recorded as it is sent, is not", async () => {
    const repo = await scratch.repo({ 'README.md': '# unsent\n' });
    const fake = await scratch.fake([{ text: 'Never answered.' }], undefined, { gate: () => new Promise<void>(() => {}) });
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
    await term.waitFor(/^›\s*$/m);
    term.type('the task of a run that never starts');
    while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    term.signal('SIGTERM');
    assert.equal(await exited(term), 130, term.screen());
    assert.deepEqual(keptFiles(repo.root)[0]?.record.texts, ['the task of a run that never starts']);
    assert.match(term.screen(), /^ {2}Not sent, kept: "the task of a run that never starts" in /m);

    // A follow-up is recorded (its `user` step) before its request: a stop then leaves it in the run.
    const again = await scratch.repo({ 'README.md': '# unsent\n' });
    const held = await scratch.fake([{ text: 'First answer.' }, { text: 'Never answered.' }], undefined, {
      gate: (index) => (index === 1 ? new Promise<void>(() => {}) : undefined),
    });
    const second = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: again.root, env: fakeEnv(held) });
    await second.waitFor(/^›\s*$/m);
    second.type('first');
    await second.waitFor(/answers "First answer\."[\s\S]*^›\s*$/m);
    second.type('a follow-up in the run');
    while (held.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    second.signal('SIGTERM');
    assert.equal(await exited(second), 130, second.screen());
    assert.match(await gitOut(again.root, ['log', '--format=%s', 'agent-journal']), / user "a follow-up in the run"/);
    assert.deepEqual(keptFiles(again.root), []);
    assert.doesNotMatch(second.screen(), /Not sent/);
  });

  test('a second Ctrl-C during a turn exits at once, and the lines typed ahead are kept first', async () => {
    const { term, root } = await sessionInALongTurn();
    term.keys('-l', 'a message typed during the turn');
    term.keys('Enter', 'C-c', 'C-c');
    assert.equal(await exited(term), 130, term.screen());
    assert.deepEqual(keptFiles(root)[0]?.record.texts, ['a message typed during the turn']);
    assert.match(term.screen(), /^ {2}Not sent, kept: "a message typed during the turn" in /m);
  });

  test('Ctrl-C clears the line and ends nothing; the up arrow brings the cleared line back; Ctrl-D then keeps nothing', async () => {
    const repo = await scratch.repo({ 'README.md': '# unsent\n' });
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root });
    await term.waitFor(/^›\s*$/m);
    term.keys('-l', 'a long message cleared by reflex');
    await term.waitFor(/^› a long message cleared by reflex\s*$/m);
    term.keys('C-c');
    await term.waitFor(/^›\s*$/m);
    term.keys('Up');
    await term.waitFor(/^› a long message cleared by reflex\s*$/m);
    term.keys('C-u', 'C-d');
    assert.equal(await exited(term), 0, term.screen());
    assert.deepEqual(keptFiles(repo.root), [], 'a cleared line is not kept');
    assert.doesNotMatch(term.screen(), /Not sent/);
  });
});

describe('the unsent-text file', () => {
  test('blank text is not kept; text past the limit is cut at a character and the lines say so; control characters are shown, not sent to the terminal', () => {
    const dir = join(scratch.dir('savepoint-unsent-'), 'unsent');
    assert.equal(keepUnsent(dir, ['', '  \n\t ']), undefined);
    assert.throws(() => readdirSync(dir), /ENOENT/, 'no file for blank text');
    const big = `${'é'.repeat(UNSENT_LIMIT_BYTES / 2 - 1)}éé`; // crosses the limit inside a character
    const kept = keepUnsent(dir, ['first\x1b[31m red', big, 'left out'])!;
    const record = JSON.parse(readFileSync(kept.file, 'utf8')) as { texts: string[]; cut: { keptBytes: number; typedBytes: number } };
    assert.equal(record.texts.length, 2);
    assert.equal(record.texts[0], 'first\x1b[31m red', 'kept as typed');
    assert.ok(Buffer.byteLength(record.texts.join('')) <= UNSENT_LIMIT_BYTES);
    assert.ok(!record.texts[1]!.includes('\uFFFD'), 'no half character');
    assert.equal(record.cut.typedBytes, Buffer.byteLength(['first\x1b[31m red', big, 'left out'].join('')));
    const line = keptLine(kept);
    assert.match(line, /^Not sent, kept: "first\^\[\[31m red" and 1 more message \(cut to the first 256 KB of \d+ KB\) in /);
    assert.doesNotMatch(line, /\x1b/);
    const found = takeUnsent(dir);
    assert.equal(found.length, 1);
    assert.match(restoredLine(found), /\(cut: only the first 256 KB of a session is kept\)/);
    assert.deepEqual(takeUnsent(dir), [], 'told once');
  });

  test('every file not told of yet is told at once, oldest first; the newest 50 files are kept, older told ones removed', () => {
    const dir = scratch.dir('savepoint-unsent-');
    for (let i = 0; i < 52; i++)
      writeFileSync(
        join(dir, `2026-01-01T00-00-${String(i).padStart(2, '0')}-000Z-1.json`),
        JSON.stringify({ format: 'savepoint/unsent@1', texts: [`text ${i}`] }),
      );
    const found = takeUnsent(dir);
    assert.deepEqual(
      found.map((kept) => kept.texts[0]),
      Array.from({ length: 52 }, (_, i) => `text ${i}`),
    );
    assert.match(
      restoredLine(found),
      /^Not sent when 52 earlier sessions here ended: "text 0" and 51 more messages, kept in 52 files, the last \S+-51-000Z-1\.json; the up arrow brings them back\.$/,
    );
    const left = readdirSync(dir).filter((name) => name.endsWith('.json'));
    assert.equal(left.length, 50);
    assert.ok(!left.includes('2026-01-01T00-00-00-000Z-1.json'), 'the oldest is gone');
  });

  test('a file that cannot be read is skipped and left where it is', () => {
    const dir = scratch.dir('savepoint-unsent-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '2026-01-01T00-00-00-000Z-1.json'), 'not json');
    assert.deepEqual(takeUnsent(dir), []);
    assert.deepEqual(readdirSync(dir).sort(), ['2026-01-01T00-00-00-000Z-1.json', 'told']);
  });
});

describe("the session prompt's unsent text", () => {
  test('the lines typed ahead and the line begun are unsent, in order; a Ctrl-C among keys typed before a question drops them from the prompts to come, into the history', async () => {
    const input = fakeTerminal();
    const output = new PassThrough();
    output.resume();
    const prompt = new SessionPrompt({ input, output });
    prompt.addTypedAhead('first line\r   \rsecond line\rhalf');
    assert.deepEqual(prompt.unsent(), ['first line', 'second line', 'half']);
    // The Ctrl-C is SIGINT to this process, as the terminal makes it: handled here, and waited for.
    let interrupted = 0;
    const onSigint = () => interrupted++;
    process.on('SIGINT', onSigint);
    try {
      input.write(' more\rthird line\x03');
      await prompt.keepTypedAhead();
      await new Promise<void>((resolve) => {
        const alive = setInterval(() => {}, 1000);
        process.once('SIGUSR2', () => {
          clearInterval(alive);
          resolve();
        });
        process.kill(process.pid, 'SIGUSR2'); // delivered after the SIGINT sent before it
      });
    } finally {
      process.off('SIGINT', onSigint);
    }
    assert.equal(interrupted, 1);
    assert.deepEqual(prompt.unsent(), [], 'dropped from the prompts to come');
    assert.deepEqual(
      prompt.history.slice(0, 4),
      ['third line', 'half more', 'second line', 'first line'],
      'newest first, for the up arrow',
    );
  });
});
