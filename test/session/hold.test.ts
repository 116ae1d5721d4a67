// A session that holds its run (SessionOptions.hold, what the interactive session gives): the
// run's next message goes to the loop waiting at its answer and replays nothing, yet the model is
// sent exactly what a session that opened the run again from the journal sends. Judged by the
// steps the journal hands back (the `replayed` events and the outcome's count) and by the request
// bodies at the fake server, side by side with the same messages given without a hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { continueRun, SessionHold, startRun, type RunOutcome, type SessionEvent } from '../../src/index.js';
import { createAnthropicProvider } from '../../src/model/anthropic.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { journalJson, runCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

const TURNS: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'First answer.' },
  { text: 'Logging.', tools: [{ name: 'run_bash', input: { command: 'echo once >> log.txt' } }] },
  { text: 'Second answer.' },
  { text: 'Third answer, on the other model.' },
];

interface Attempt {
  number: number;
  firstLiveStep: number;
  end?: { how: string };
}

// The same messages to one repository: a task, a follow-up, /model, another follow-up.
async function session(
  hold: SessionHold | undefined,
): Promise<{ root: string; requests: string[]; outcomes: RunOutcome[]; events: SessionEvent[][]; attempts: Attempt[] }> {
  const repo = await scratch.repo({ 'README.md': '# held\n' });
  const fake = await scratch.fake(TURNS);
  const provider = () => createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
  const events: SessionEvent[][] = [];
  const base = () => {
    const turn: SessionEvent[] = [];
    events.push(turn);
    return {
      dir: repo.root,
      provider,
      sandbox: { use: false },
      approve: async () => true,
      onEvent: (event: SessionEvent) => void turn.push(event),
      ...(hold ? { hold } : {}),
    };
  };
  const outcomes: RunOutcome[] = [];
  outcomes.push(await startRun({ ...base(), task: 'read the readme', fresh: true }));
  const run = outcomes[0]!.run;
  outcomes.push(await continueRun({ ...base(), run, message: 'now log it', newMessage: true }));
  outcomes.push(await continueRun({ ...base(), run, message: '', model: 'claude-other' }));
  outcomes.push(await continueRun({ ...base(), run, message: 'and a third', newMessage: true }));
  await hold?.close();
  // The repository's path is in the system prompt: the same words in either repository.
  const requests = fake.requests.map((body) => JSON.stringify(body).split(repo.root).join('<root>'));
  const record = await journalJson<{ status: string; attempts: Attempt[] }>(repo.root, `runs/${run}/run.json`);
  assert.equal(record.status, 'finished');
  return { root: repo.root, requests, outcomes, events, attempts: record.attempts };
}

test('a held run: the next messages replay nothing, and the model is sent what a full replay sends', async () => {
  const hold = new SessionHold();
  const held = await session(hold);
  const reopened = await session(undefined);

  // Without a hold every message opens the run again and replays every step before it.
  assert.deepEqual(
    reopened.outcomes.map((o) => o.replayed),
    [0, 3, 7, 8],
  );
  // Held, each later turn hands nothing back from the journal, and says it went on from the open run.
  assert.deepEqual(
    held.outcomes.map((o) => o.replayed),
    [0, 0, 0, 0],
  );
  assert.deepEqual(
    held.events.map((turn) => turn.filter((e) => e.type === 'replayed').length),
    [0, 0, 0, 0],
  );
  const opened = held.events.map((turn) => turn.find((e) => e.type === 'opened') as Extract<SessionEvent, { type: 'opened' }>);
  assert.deepEqual(
    opened.map((e) => e.held ?? false),
    [false, true, true, true],
  );
  assert.deepEqual(
    opened.map((e) => e.recordedSteps),
    [0, 3, 7, 8],
    'each turn knows the run as it stands',
  );
  assert.deepEqual(
    held.outcomes.map((o) => o.live),
    reopened.outcomes.map((o) => o.live),
  );
  assert.deepEqual(
    held.outcomes.map((o) => o.final),
    ['First answer.', 'Second answer.', 'Second answer.', 'Third answer, on the other model.'],
  );

  // The same requests, byte for byte: the held conversation is the one replay rebuilds.
  assert.equal(held.requests.length, 5);
  assert.deepEqual(held.requests, reopened.requests);
  assert.equal(JSON.parse(held.requests[4]!).model, 'claude-other', '/model held: the next turn goes to the new model');
  assert.equal(readFileSync(join(held.root, 'log.txt'), 'utf8'), 'once\n');
  // Each message is an attempt of its own in run.json, as when it opened the run: a crash in its turn is never taken for the run finished.
  const attempts = (list: Attempt[]) => list.map((a) => `${a.number}@${a.firstLiveStep}:${a.end?.how}`);
  assert.deepEqual(attempts(held.attempts), attempts(reopened.attempts));
  assert.deepEqual(attempts(held.attempts), ['1@1:finished', '2@4:finished', '3@8:finished', '4@9:finished']);

  // The held run's journal is whole: the CLI replays it to the same answer, with no request.
  const replay = await runCli(['log', '--json'], { cwd: held.root });
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(hold.run, undefined, 'closed');
});

test("a held run's small packs roll up in the pause after its answer, before the session ends", async () => {
  const repo = await scratch.repo({ 'README.md': '# held\n' });
  const fake = await scratch.fake(TURNS.slice(0, 2));
  const hold = new SessionHold();
  const packDir = join(repo.root, '.git', 'objects', 'pack');
  const packs = () => readdirSync(packDir).filter((name) => name.endsWith('.pack')).length;
  try {
    const outcome = await startRun({
      dir: repo.root,
      provider: () => createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' }),
      sandbox: { use: false },
      approve: async () => true,
      hold,
      task: 'read the readme',
      fresh: true,
    });
    assert.equal(outcome.final, 'First answer.');
    assert.equal(hold.run, outcome.run, 'the run is held, its loop waiting for the next message');
    // Each append wrote a pack of its own; the pause after the answer rolls them into one while the run stays held.
    assert.ok(packs() >= 3, `the run's appends wrote ${packs()} packs`);
    await waitUntil(() => packs() === 1, "the held run's packs rolled up into one");
    assert.equal(hold.run, outcome.run, 'still held: the roll-up closed nothing');
  } finally {
    await hold.close();
  }
  const fsck = spawnSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: repo.root, encoding: 'utf8' });
  assert.equal(fsck.status, 0, fsck.stderr);
});
