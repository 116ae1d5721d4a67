// One answer's reads killed with SIGKILL in the middle, on the real CLI against the fake Anthropic
// server and the tests' own MCP server: the first read (a read-only MCP tool) waits for a file the
// test makes only later, the second finishes and is recorded after it, so the journal holds step 3
// and not step 2. The identical command runs only the unfinished read again, hands the finished one
// back, and sends the model both results in the order of its calls.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertToolPairing, fakeEnv, lastToolResults, resultText, runCli, startCli, stepLines, waitUntil } from '../helpers/cli.js';
import { counted, countingServer, serverPids, waitForExit, writeMcpJson } from '../tools/mcp/helpers.js';
import { trustFolder } from '../helpers/trust.js';

const scratch = useScratch();

describe("one answer's reads killed with SIGKILL in the middle", () => {
  test('the identical command re-runs only the unfinished read and hands both back in call order', async () => {
    const turns: ScriptTurn[] = [
      { text: 'Looking both up.', tools: [{ name: 'mcp__counter__slow_lookup', input: { key: 'alpha' } }, { name: 'mcp__counter__lookup', input: { key: 'beta' } }] },
      { text: 'Both are 42.' },
    ];
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    const hold = join(counts, 'release');
    writeMcpJson(repo.root, { counter: countingServer(counts, '--with-slow', { HOLD_FILE: hold }) });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const args = ['run', '--yes', '--no-sandbox', '--run', 'reads', 'look both up'];

    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    const recorded = () => spawnSync('git', ['ls-tree', '-r', '--name-only', 'agent-journal', 'runs/reads/steps'], { cwd: repo.root, encoding: 'utf8' }).stdout;
    await waitUntil(() => counted(counts, 'slow_lookup.calls') === 1 && /000003-mcp__counter__lookup\.json/.test(recorded()), 'the second read recorded while the first still runs', { child: first });
    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');
    assert.doesNotMatch(recorded(), /000002-/, 'step 2 was never recorded: a hole before step 3');
    assert.deepEqual(await waitForExit(serverPids(counts)), []);

    writeFileSync(hold, '');
    const second = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.equal(counted(counts, 'slow_lookup.calls'), 2, 'the unfinished read runs again');
    assert.equal(counted(counts, 'lookup.calls'), 1, 'the finished read is handed back, not run again');
    const modes = stepLines(second.stdout).sort((a, b) => a.position - b.position).map((line) => `${line.position} ${line.mode}`);
    assert.deepEqual(modes.slice(0, 3), ['1 replayed', '2 live', '3 replayed'], second.stdout);
    assert.equal(fake.requests.length, 2, 'the answer that asked for the reads is not asked for again');
    const results = lastToolResults(fake.requests[1]!);
    assert.deepEqual(results.map((block) => (block as { tool_use_id: string }).tool_use_id), ['toolu_s0_0', 'toolu_s0_1'], 'in the order of the calls');
    assert.match(resultText(results[0]!), /alpha is 42, slowly/);
    assert.match(resultText(results[1]!), /beta is 42/);
    assertToolPairing(fake.requests);
  });
});
