// A child for the roll-up kill tests (test/git/pack-rollup.test.ts):
// appends steps from argv[3] on to the journal of argv[2] until killed, rolling every small pack up
// every few appends (argv[4] `tidy`: a run's end's roll-up every ten, waited for), and prints
// `appended <n>` once each append has returned.
import { JournalStore } from '../../src/journal/store.js';
import { rollupStepContent, rollupStepPath } from './rollup-kills.js';

const [root, first, how] = process.argv.slice(2) as [string, string, string?];
const store = await JournalStore.open(root);
for (let i = Number(first); ; i++) {
  await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i} run_bash`);
  process.stdout.write(`appended ${i}\n`);
  if (how === 'tidy') {
    if (i % 10 === 0) await store.objects.rollup.tidy();
  } else if (i % 3 === 0) void store.objects.rollup.rollNow(true).catch(() => undefined);
}
