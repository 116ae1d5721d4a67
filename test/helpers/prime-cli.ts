// Run once by scripts/run-tests.js before any test (`node <compiled>/test/helpers/prime-cli.js`),
// with NODE_COMPILE_CACHE set to the folder every test's CLI will use: one `savepoint run` against
// the fake Anthropic server that reads, writes, edits and runs a command, so that the CLI's kept
// code (bin/savepoint.js) is a run's and holds the model client (the SDK, Node's fetch) and the
// tools. bin/savepoint.js keeps the code of the first run that finds none and does not write it
// again: without this, whichever test ran first decided what the suite's ~1,000 spawns found
// compiled (a `script:` run keeps no SDK code, and then every run against the fake compiled it).
// It exits 0 whatever happens: a cache that was not made only costs the saving.
import { fakeEnv, runCli } from './cli.js';
import { startFakeAnthropic } from './fake-anthropic.js';
import { createTempRepo } from './temp-repo.js';

try {
  const repo = await createTempRepo({ files: { 'notes.txt': 'one\n' }, commit: true });
  const fake = await startFakeAnthropic({
    turns: [
      { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
      {
        text: 'Writing.',
        tools: [
          { name: 'edit_file', input: { path: 'notes.txt', old_string: 'one', new_string: 'two' } },
          { name: 'write_file', input: { path: 'more.txt', content: 'more\n' } },
        ],
      },
      { text: 'Checking.', tools: [{ name: 'run_bash', input: { command: 'cat notes.txt more.txt' } }] },
      { text: 'Done.' },
    ],
  });
  try {
    await runCli(['run', '--yes', 'prime the kept code'], { cwd: repo.root, env: fakeEnv(fake), timeoutMs: 60_000 });
  } finally {
    await fake.close();
    await repo.remove();
  }
} catch {
  // not primed: the first test's CLI keeps its code instead
}
