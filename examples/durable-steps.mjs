#!/usr/bin/env node
// The valve in your own loop. Run it twice inside any git repository (after `npm install`):
//
//   node examples/durable-steps.mjs        # first time: every step runs live and is committed
//   node examples/durable-steps.mjs        # again: every step is handed back from the journal
//   git log --oneline agent-journal        # one commit per step
//
// Kill it with Ctrl-C during the slow step and run it again: the finished steps replay and the
// slow step (recorded with an intent first) is reported as in flight.
import { openJournal } from '../dist/index.js';

const slow = (ms, value) => new Promise((resolve) => setTimeout(() => resolve(value), ms));

const journal = await openJournal({
  dir: process.cwd(),
  run: process.env.RUN ?? 'library-example',
  task: 'Show the durable valve',
  onEvent: (event) => {
    if (event.type === 'replayed') console.log(`#${event.position} REPLAYED (from journal) ${event.description} -> ${event.summary}`);
    if (event.type === 'recorded') console.log(`#${event.position} LIVE (running now)      ${event.description} -> ${event.summary} (${event.durationMs} ms)`);
  },
});
try {
  const config = await journal.step('load_config', { file: 'app.json' }, () => slow(300, { port: 8080 }), {
    describe: 'load_config app.json',
    summarize: (c) => `port ${c.port}`,
  });
  const deployed = await journal.step('deploy', { port: config.port }, () => slow(1500, { ok: true, at: new Date().toISOString() }), {
    intent: true, // not safe to repeat: the intent is committed before it runs
    describe: `deploy on port ${config.port}`,
    summarize: (d) => (d.ok ? 'deployed' : 'failed'),
    onInFlight: () => ({ result: { ok: false, unknown: true }, summary: 'outcome unknown', resolution: 'in-flight-reported' }),
  });
  await journal.finish('finished', { final: deployed.ok ? 'deployed' : 'check the deploy by hand' });
  console.log(deployed.ok ? 'done: deployed' : 'done: the deploy was interrupted, check it by hand');
} finally {
  journal.close();
}
