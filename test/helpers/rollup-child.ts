// A child for the roll-up kill test (test/journal/pack-rollup.test.ts): appends steps from
// argv[3] on to the journal of argv[2] until killed, rolling every small pack up every few appends,
// and prints `appended <n>` once each append has returned.
import { JournalStore } from '../../src/index.js';

const [root, first] = process.argv.slice(2) as [string, string];
const store = await JournalStore.open(root);
for (let i = Number(first); ; i++) {
  const path = `runs/r/steps/${String(Math.floor(i / 100)).padStart(3, '0')}/${String(i).padStart(6, '0')}-run_bash.json`;
  const content = `${JSON.stringify({ step: i, output: `exit 0\n${'a line of output\n'.repeat(20)}${i}` })}\n`;
  await store.append([{ path, content }], `r #${i} run_bash`);
  process.stdout.write(`appended ${i}\n`);
  if (i % 3 === 0) void store.objects.rollup.rollNow(true).catch(() => undefined);
}
