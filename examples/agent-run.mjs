#!/usr/bin/env node
// The whole agent as a library, exactly as `savepoint run` drives it. Run it twice inside any git
// repository (after `npm install` in the savepoint folder):
//
//   node examples/agent-run.mjs        # first time: the model and its tools run live, each step committed
//   node examples/agent-run.mjs        # again: every step is handed back from the journal, nothing re-runs
//   git log --oneline agent-journal    # one commit per step
//
// The model here is a script (no API key): it writes hello.txt, reads it back and answers. Pass
// MODEL=claude-sonnet-5-5 (with ANTHROPIC_API_KEY set) to use a real model on the same task.
import { createScriptedProvider, startRun } from '../dist/index.js';

// The scripted model answers turn k of the conversation with turns[k], the same in every process.
const scripted = createScriptedProvider({
  model: 'scripted-example',
  turns: [
    { text: 'I will write the greeting.', tools: [{ name: 'write_file', input: { path: 'hello.txt', content: 'hello from the agent\n' } }] },
    { text: 'Checking it.', tools: [{ name: 'read_file', input: { path: 'hello.txt' } }] },
    { text: 'hello.txt now says hello.' },
  ],
});

const outcome = await startRun({
  dir: process.cwd(),
  task: 'Write hello.txt with a greeting',
  // The model's name is part of every model step's identity: the same name replays the same run.
  model: process.env.MODEL ?? 'scripted-example',
  provider: process.env.MODEL ? undefined : scripted,
  // Every tool call is approved here; the CLI asks a person instead (or takes --yes).
  approve: async () => true,
  // Commands run in bubblewrap by default; the scripted model runs none, so it needs no sandbox.
  sandbox: { use: Boolean(process.env.MODEL) },
  onEvent: (event) => {
    if (event.type === 'replayed') console.log(`#${event.position} REPLAYED (from journal) ${event.description} -> ${event.summary}`);
    if (event.type === 'recorded') console.log(`#${event.position} LIVE (running now)      ${event.description} -> ${event.summary} (${event.durationMs} ms)`);
  },
});
console.log(`${outcome.status}: ${outcome.final} (${outcome.replayed} replayed, ${outcome.live} live)`);
