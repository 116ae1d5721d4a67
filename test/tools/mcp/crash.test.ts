// The issue's "Holds when", on the real CLI against the fake Anthropic server and the tests' own
// MCP server (which counts its starts and calls in files): a read-only call, then a destructive one
// killed with SIGKILL in progress, then the identical command, then the identical command again.
// The kill takes savepoint alone, or its whole process group (`kill -9 %1` in a shell). A read-only
// call killed in progress is made again, like a read.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { STOP_GRACE_MS } from '../../../src/cli/view/terminal-run.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertOneParagraph, assertToolPairing, assistantMessages, fakeEnv, journalPaths, lastToolResults, resultText, runCli, startCli, waitUntil, type CliOptions } from '../../helpers/cli.js';
import { counted, countingServer, serverPids, waitForExit, waitForNoProcessOf, writeMcpJson } from './helpers.js';
import { trustFolder } from '../../helpers/trust.js';

const scratch = useScratch();

describe('an MCP run killed with SIGKILL during a destructive call', () => {
  const task = 'look the key up, then mail it';
  const turns: ScriptTurn[] = [
    { text: 'Looking it up.', tools: [{ name: 'mcp__counter__lookup', input: { key: 'alpha' } }] },
    { text: 'Mailing it.', tools: [{ name: 'mcp__counter__send_mail', input: { to: 'ops@example.com', body: '42' } }] },
    { text: 'Done: looked up and mailed (or told it is unknown).' },
  ];
  const args = ['run', '--yes', '--no-sandbox', task];

  // A run whose send_mail call is in progress (in a folder the person trusts, its server approved: docs/trust.md): it waits on a file that is never made, until the kill.
  // `under` starts it under another command (setsid: savepoint leads a process group of its own).
  async function mailInProgress(under?: CliOptions['under']) {
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    writeMcpJson(repo.root, { counter: countingServer(counts, undefined, { RELEASE_FILE: join(counts, 'never') }) });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted), ...(under ? { under } : {}) });
    await waitUntil(() => counted(counts, 'send_mail.calls') === 1, 'the send_mail call to start', { child: first });
    return { fake, repo, counts, first, trusted };
  }

  test('the identical command calls neither tool again, tells the model the mail is unknown, re-sends no finished request, and finishes; once more it starts no server', async () => {
    const { fake, repo, counts, first, trusted } = await mailInProgress();

    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');
    assert.equal(counted(counts, 'lookup.calls'), 1);
    assert.equal(fake.requests.length, 2, 'two model calls before the kill');
    // The server was mid-call, its stdin closed: it is gone all the same, no orphan left.
    assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no MCP server process outlives a kill -9 of savepoint');
    assert.deepEqual(await waitForNoProcessOf(counts), [], 'nor does a guard process');

    const second = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(counted(counts, 'send_mail.calls'), 1, 'the destructive call is not made again');
    assert.equal(counted(counts, 'lookup.calls'), 1, 'the read-only call finished and replays');
    assert.equal(counted(counts, 'starts'), 1, 'the resumed run needed no server: nothing went live on one');
    const fresh = fake.requests.slice(2);
    assert.deepEqual(fresh.map(assistantMessages), [2], 'only the unfinished turn is asked for');
    // The replayed steps hand back exactly what the live ones did: the conversation sent before the kill is sent again as it was.
    // (The prompt-cache mark moves to each request's last message: it is not part of what was recorded.)
    const unmarked = (messages: unknown[]) => JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === 'cache_control' ? undefined : value))) as unknown[];
    assert.deepEqual(unmarked(fresh[0]!.messages.slice(0, fake.requests[1]!.messages.length)), unmarked(fake.requests[1]!.messages));
    // The read-only call recorded no intent (safe to repeat); the destructive one did, before it ran.
    const paths = await journalPaths(repo.root);
    assert.equal(paths.filter((path) => path.endsWith('-mcp__counter__lookup.intent.json')).length, 0);
    assert.equal(paths.filter((path) => path.endsWith('-mcp__counter__send_mail.intent.json')).length, 1);
    const [answer] = lastToolResults(fresh[0]!);
    assert.equal(answer?.is_error, true);
    assert.match(resultText(answer!), /mcp__counter__send_mail.*outcome is unknown.*not run again/s);
    assertToolPairing(fake.requests);

    const third = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(third.code, 0, third.stderr);
    assert.equal(fake.requests.length, 3, 'a finished run sends no request');
    assert.equal(counted(counts, 'starts'), 1, 'replaying a finished run starts no MCP server');
    assert.equal(counted(counts, 'lookup.calls') + counted(counts, 'send_mail.calls'), 2);
    assert.deepEqual(await waitForExit(serverPids(counts)), []);
  });

  // What the identical command does next is the test above's: the journal a kill -9 leaves is the
  // same whichever of the group's processes it reached first (the intent of send_mail, no result).
  test('a SIGKILL of savepoint\'s whole process group leaves no server running either', async () => {
    const { counts, first } = await mailInProgress(['setsid']);
    // The guard that savepoint started in its own group dies with it: the server must outlive neither.
    process.kill(-first.pid, 'SIGKILL');
    assert.equal((await first.result).signal, 'SIGKILL');
    assert.deepEqual(await waitForExit(serverPids(counts)), [], 'no MCP server process outlives a kill -9 of savepoint\'s process group');
    assert.deepEqual(await waitForNoProcessOf(counts), [], 'nor does a guard process');
  });

  test('a read-only call killed in progress is made again, as a read is: it recorded no intent', async () => {
    const fake = await scratch.fake([{ tools: [{ name: 'mcp__counter__stall', input: {} }] }, { text: 'It never answers.' }]);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    writeMcpJson(repo.root, { counter: countingServer(counts, '--with-faults') });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const stallArgs = ['run', '--yes', '--no-sandbox', 'call the tool that stalls'];
    const first = startCli(stallArgs, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    await waitUntil(() => counted(counts, 'stall.calls') === 1, 'the stall call to start', { child: first });
    first.kill();
    await first.result;
    assert.deepEqual(await waitForNoProcessOf(counts), []);

    const second = await runCli(stallArgs, { cwd: repo.root, env: fakeEnv(fake, { MCP_TOOL_TIMEOUT: '1000', ...trusted }) });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(counted(counts, 'stall.calls'), 2, 'the read-only call is made again');
    assert.doesNotMatch(second.stdout, /in flight|outcome unknown: started before a crash/);
    assert.equal((await journalPaths(repo.root)).filter((path) => path.includes('-mcp__counter__stall.intent')).length, 0);
  });

  test('--in-flight fail stops on the unknown call, and --in-flight rerun makes it again, once', async () => {
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo();
    const counts = scratch.dir('savepoint-mcp-counts-');
    const release = join(counts, 'release');
    writeMcpJson(repo.root, { counter: countingServer(counts, undefined, { RELEASE_FILE: release }) });
    const trusted = trustFolder(repo.root, scratch.dir('savepoint-config-'));
    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    await waitUntil(() => counted(counts, 'send_mail.calls') === 1, 'the send_mail call to start', { child: first });
    first.kill();
    await first.result;

    const failed = await runCli(['run', '--yes', '--no-sandbox', '--in-flight', 'fail', task], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(failed.code, 1);
    assert.match(assertOneParagraph(failed.stderr), /mcp__counter__send_mail/);
    assert.equal(counted(counts, 'send_mail.calls'), 1, '--in-flight fail calls nothing');

    writeFileSync(release, '');
    const rerun = await runCli(['run', '--yes', '--no-sandbox', '--in-flight', 'rerun', task], { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(counted(counts, 'send_mail.calls'), 2, '--in-flight rerun makes the call again');
    assert.equal(counted(counts, 'lookup.calls'), 1);
    const [answer] = lastToolResults(fake.requests.at(-1)!);
    assert.equal(resultText(answer!), 'sent to ops@example.com');
    assert.deepEqual(await waitForExit(serverPids(counts)), []);
  });

  test('Ctrl-C during the destructive call ends savepoint within two seconds, stops the server, and the call is not made again', async () => {
    const { fake, repo, counts, first, trusted } = await mailInProgress();
    first.child.kill('SIGINT');
    // Within two seconds: savepoint ends by its own clock (STOP_GRACE_MS) at the latest, by itself
    // (130), not waiting for the call (held until a file that never comes). The wall clock is not
    // asserted: on a loaded machine the exit came 2.5-5.5 s after the signal.
    const stopped = await first.result;
    assert.equal(stopped.code, 130, `${stopped.stdout}\n${stopped.stderr}`);
    assert.ok(STOP_GRACE_MS < 2000, `savepoint gives itself ${STOP_GRACE_MS} ms after Ctrl-C`);
    assert.deepEqual(await waitForExit(serverPids(counts)), []);

    const second = await runCli(args, { cwd: repo.root, env: fakeEnv(fake, trusted) });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(counted(counts, 'send_mail.calls'), 1);
    const [answer] = lastToolResults(fake.requests.at(-1)!);
    assert.match(resultText(answer!), /outcome is unknown/);
  });
});
