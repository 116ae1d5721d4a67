// The interactive session ended by a signal, in a real pseudo-terminal (tmux): SIGHUP (its terminal
// closed) or SIGTERM at the prompt ends it as /exit does, and one during a turn stops the turn and
// ends the session instead of asking again. Either way the process exits as itself, 130, and keeps
// its compiled code for the next start (a process the signal killed, as SIGHUP at the prompt did,
// exits 129 and leaves none: the next command compiled the whole command line again).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, gitOut } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

// The kept compiled code the bin wrote into `dir` (NODE_COMPILE_CACHE), by file name.
function keptCode(dir: string): string[] {
  const found: string[] = [];
  for (const folder of readdirSync(dir)) for (const name of readdirSync(join(dir, folder))) if (name.endsWith('.v8')) found.push(name);
  return found;
}

describe('a session ended by a signal', { concurrency: true }, () => {
  for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
    test(`${signal} at the prompt, after an answer: the session ends as /exit ends it, exit 130, its compiled code kept`, async () => {
      const repo = await scratch.repo({ 'README.md': '# signals\n' });
      const script = join(scratch.dir('savepoint-script-'), 'turns.json');
      writeFileSync(script, JSON.stringify({ turns: [{ text: 'First answer.' }, { text: 'Never asked.' }] }));
      const cache = scratch.dir('savepoint-kept-code-');
      const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', `script:${script}`], {
        cwd: repo.root,
        env: { NODE_COMPILE_CACHE: cache },
      });
      await term.waitFor(/^›\s*$/m);
      term.type('say something');
      await term.waitFor(/answers "First answer\."[\s\S]*^›\s*$/m);
      term.signal(signal);
      assert.equal(await exited(term), 130, term.screen());
      assertNoStack(term.screen());
      assert.ok(
        keptCode(cache).some((name) => name.endsWith('-run.v8')),
        `kept code written: ${keptCode(cache).join(', ')}`,
      );
      // The run holds the message and its answer, and git reads the journal whole.
      assert.match(await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']), /answers "First answer\."/);
      await gitOut(repo.root, ['fsck', '--strict']);
    });
  }

  test('SIGHUP during a turn: the turn stops and the session ends, exit 130, without asking again', async () => {
    const repo = await scratch.repo({ 'README.md': '# signals\n' });
    const script = join(scratch.dir('savepoint-script-'), 'turns.json');
    // A command that outlives the signal: the turn is in it when the terminal closes.
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { text: 'Waiting.', tools: [{ name: 'run_bash', input: { command: 'echo started; sleep 600' } }] },
          { text: 'Never asked.' },
        ],
      }),
    );
    const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', `script:${script}`], { cwd: repo.root });
    await term.waitFor(/^›\s*$/m);
    term.type('wait for it');
    await term.waitFor(/started/);
    term.signal('SIGHUP');
    assert.equal(await exited(term), 130, term.screen());
    const screen = term.screen();
    assertNoStack(screen);
    assert.match(screen, /Stopping on/);
    // No prompt after the stop: the session did not ask for another message.
    assert.doesNotMatch(screen.slice(screen.lastIndexOf('Stopping on')), /^›/m);
  });
});
