// A child for the roll-up kill tests (test/journal/pack-rollup.test.ts, pack-deltify.test.ts):
// appends steps from argv[3] on to the journal of argv[2] until killed, rolling every small pack up
// every few appends (argv[4] `tidy`: a run's end's roll-up every ten, waited for), and prints
// `appended <n>` once each append has returned.
import { JournalStore } from '../../src/index.js';

const [root, first, how] = process.argv.slice(2) as [string, string, string?];
const store = await JournalStore.open(root);
for (let i = Number(first); ; i++) {
  const path = `runs/r/steps/${String(Math.floor(i / 100)).padStart(3, '0')}/${String(i).padStart(6, '0')}-run_bash.json`;
  const content = `${JSON.stringify({ step: i, output: `exit 0\n${'a line of output\n'.repeat(20)}${i}` })}\n`;
  await store.append([{ path, content }], `r #${i} run_bash`);
  process.stdout.write(`appended ${i}\n`);
  if (how === 'tidy') {
    if (i % 10 === 0) await store.objects.rollup.tidy();
  } else if (i % 3 === 0) void store.objects.rollup.rollNow(true).catch(() => undefined);
}
