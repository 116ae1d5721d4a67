// Compaction through the real CLI, against a test server with a small context window: a run that
// reads twelve 8,000-character documents compacts when its conversation nears the window (from the
// usage each response reports) or when the server answers 400 "prompt is too long", as a journaled
// step of kind `compact`; it never leaves a tool_use without its tool_result, replays without
// re-sending a compaction, keeps every original result whole in the journal, and shows each
// compaction with its tokens before and after in log, show and the HTML page.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCompactionRequest } from '../../../src/model/compaction.js';
import { turnIndex } from '../../../src/model/script-turn.js';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertFsckClean, assertStepModes, assertToolPairing, fakeEnv, journalJson, journalPaths, runCli, startCli, waitUntil } from '../../helpers/cli.js';
import type { MessagesBody } from '../../helpers/fake-anthropic.js';

const scratch = useScratch();
const DOCS = 12;
const TASK = 'read the twelve documents';

function docs(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 1; i <= DOCS; i++) files[`docs/doc${i}.txt`] = `${`Document ${i}. `.padEnd(40, '.')}\n`.repeat(200);
  return files;
}

// One read per turn, then the answer.
const READ_ALL: ScriptTurn[] = [
  ...Array.from({ length: DOCS }, (_, i) => ({ text: `Reading document ${i + 1}.`, tools: [{ name: 'read_file', input: { path: `docs/doc${i + 1}.txt` } }] })),
  { text: 'Read all twelve documents.' },
];

const modelTurns = (requests: MessagesBody[]) => requests.filter((r) => !isCompactionRequest(r.messages)).map((r) => turnIndex(r.messages));
const compactions = (requests: MessagesBody[]) => requests.filter((r) => isCompactionRequest(r.messages)).length;

async function compactSteps(root: string): Promise<Array<Record<string, unknown>>> {
  const paths = (await journalPaths(root)).filter((p) => /-compact-result\.json$|-compact\.json$/.test(p));
  return Promise.all(paths.map((p) => journalJson(root, p)));
}

describe('compaction', { concurrency: true }, () => {
  test('near the context window the run compacts as a journaled step, and a replay re-sends nothing', async () => {
    const repo = await scratch.repo(docs());
    const fake = await scratch.fake(READ_ALL, undefined, { contextWindow: 8_000 });
    const run = await runCli(['run', '--yes', '--context-window', '8000', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /Read all twelve documents\./);
    const steps = await compactSteps(repo.root);
    assert.ok(steps.length >= 2, `compacted more than once (${steps.length})`);
    assert.equal(compactions(fake.requests), steps.length, 'one compaction request per compact step');
    assert.deepEqual(modelTurns(fake.requests), Array.from({ length: DOCS + 1 }, (_, i) => i), 'every turn asked once, in order');
    assert.ok(fake.requests.every((r) => JSON.stringify(r).length / 4 <= 8_000), 'no request passed the window');
    assertToolPairing(fake.requests);
    for (const step of steps) {
      const result = step.result as { tokensBefore: number; tokensAfter: number; summary: string };
      assert.ok(result.tokensBefore >= 0.8 * 8_000, `compacted at 80% of the window (${result.tokensBefore})`);
      assert.ok(result.tokensAfter < result.tokensBefore);
      assert.match(result.summary, /Summary of turns 1 to/);
    }
    // The journal keeps every original result whole.
    const reads = (await journalPaths(repo.root)).filter((p) => p.endsWith('-read_file.json'));
    assert.equal(reads.length, DOCS);
    for (const path of reads) {
      const output = ((await journalJson(repo.root, path)).result as { output: string }).output;
      assert.equal(output.split('\n').filter((line) => /Document \d+\. \.+$/.test(line)).length, 200, 'all 200 lines of the document');
    }

    const again = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, assertStepModes(run.stdout, 0).length);
    assert.equal(fake.requests.length, DOCS + 1 + steps.length, 'the replay sent nothing, compactions included');

    // --json tells each compaction, replayed too, with the conversation's size before and after.
    const json = await runCli(['run', '--yes', '--json', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(json.code, 0, json.stderr);
    const told = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; replayed?: boolean; tokensBefore?: number; tokensAfter?: number });
    const compactionLines = told.filter((e) => e.type === 'compaction');
    assert.equal(compactionLines.length, steps.length);
    for (const line of compactionLines) assert.ok(line.replayed === true && line.tokensAfter! < line.tokensBefore!, JSON.stringify(line));

    const id = /run (\S+)/.exec(run.stdout)![1]!;
    const log = await runCli(['log', id], { cwd: repo.root });
    assert.match(log.stdout, /compact\s+compact: near the window\s+→ [\d,]+ → [\d,]+ tokens \(estimated\)/);
    const at = (steps[0] as { step: number }).step;
    const shown = await runCli(['show', id, String(at)], { cwd: repo.root });
    assert.match(shown.stdout, /tokens before: [\d,]+\n\s*tokens after: [\d,]+ \(estimated\)/);
    const html = join(scratch.dir(), 'run.html');
    assert.equal((await runCli(['log', id, '--html', html], { cwd: repo.root })).code, 0);
    assert.match(readFileSync(html, 'utf8'), /[\d,]+ → [\d,]+ tokens \(estimated\)/);
    await assertFsckClean(repo.root);
  });

  test('a 400 "prompt is too long" is recorded, compacted and asked again; --no-compact fails with the API\'s words', async () => {
    const repo = await scratch.repo(docs());
    // The run believes the window is large, so only the server's refusal makes it compact.
    const fake = await scratch.fake(READ_ALL, undefined, { contextWindow: 8_000 });
    const run = await runCli(['run', '--yes', '--context-window', '1000000', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /model turn \d+\s+→ refused: prompt is too long: \d+ tokens > 8000 maximum/);
    assert.match(run.stdout, /LIVE \(running now\)\s+compact: prompt too long\s+→ [\d,]+ → [\d,]+ tokens/);
    const steps = await compactSteps(repo.root);
    assert.ok(steps.length >= 1);
    assertToolPairing(fake.requests);
    const asked = fake.requests.length;
    const again = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(fake.requests.length, asked, 'the replay compacts at the same places and sends nothing');

    const other = await scratch.repo(docs());
    const off = await runCli(['run', '--yes', '--no-compact', TASK], { cwd: other.root, env: fakeEnv(fake) });
    assert.equal(off.code, 1);
    assert.match(off.stderr, /answered 400 invalid_request_error: "prompt is too long/);
  });

  test('killed right after a compaction step, the identical command re-sends nothing that was finished', async () => {
    const repo = await scratch.repo(docs());
    const fake = await scratch.fake(READ_ALL, undefined, { contextWindow: 8_000 });
    const args = ['run', '--yes', '--context-window', '8000', TASK];
    const cli = startCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => /#\d+\s+LIVE \(running now\)\s+compact/.test(cli.stdout), 'the first compaction', { child: cli });
    cli.kill();
    await cli.result;
    const before = fake.requests.length;
    const compactedBefore = compactions(fake.requests);
    const turnsBefore = modelTurns(fake.requests);
    // A compaction asked and not recorded when the kill came (the next one, begun at once) was not
    // finished: the resume asks it again. Every one recorded is asked once, never again.
    const inFlight = compactedBefore - (await compactSteps(repo.root)).length;
    assert.ok(inFlight === 0 || inFlight === 1, `${inFlight} compactions unrecorded at the kill`);

    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    const resumed = fake.requests.slice(before);
    const finished = new Set(turnsBefore.slice(0, -1)); // the last turn asked may have been in flight at the kill
    for (const turn of modelTurns(resumed)) assert.ok(!finished.has(turn), `turn ${turn} was finished before the kill and was asked again`);
    assert.equal(compactions(fake.requests), (await compactSteps(repo.root)).length + inFlight, 'each compaction sent once, none again after the kill');
    assert.ok(compactedBefore >= 1);
    assertToolPairing(fake.requests);
    await assertFsckClean(repo.root);
  });
});
