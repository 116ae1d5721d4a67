// Who decides whether an MCP tool runs, on the real CLI with the tests' own counting server: settings'
// rules `mcp__<server>__<tool>` (a deny holds under --yes, an allow needs no terminal), and on a
// terminal the approval question a tool that is not read-only asks, as run_bash does.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertNoStack, fakeEnv, lastToolResults, resultText, runCli } from '../../helpers/cli.js';
import { onPty, plain, SKIP_NO_PTY } from '../../helpers/pty.js';
import { counted, countingServer, writeMcpJson } from './helpers.js';
import { trustFolder } from '../../helpers/trust.js';

const scratch = useScratch();

const turns: ScriptTurn[] = [
  { tools: [{ name: 'mcp__counter__lookup', input: { key: 'k' } }] },
  { tools: [{ name: 'mcp__counter__send_mail', input: { to: 'a@b.c', body: 'hi' } }] },
  { text: 'done' },
];

// A repository whose .mcp.json starts the counting server, with `permissions` in its project settings,
// and a user config folder of its own (no settings of the machine's); the model answers `script`.
async function setUp(permissions?: Record<string, unknown>, script: ScriptTurn[] = turns) {
  const fake = await scratch.fake(script);
  const repo = await scratch.repo();
  const counts = scratch.dir('savepoint-mcp-counts-');
  writeMcpJson(repo.root, { counter: countingServer(counts) });
  if (permissions) {
    mkdirSync(join(repo.root, '.savepoint'), { recursive: true });
    writeFileSync(join(repo.root, '.savepoint', 'settings.json'), JSON.stringify({ permissions }));
  }
  const home = scratch.dir('savepoint-home-');
  // The person trusts this folder and its server (docs/trust.md): what is tested is what the rules decide then.
  return { fake, repo, counts, env: { ...fakeEnv(fake), HOME: home, ...trustFolder(repo.root, join(home, '.config')) } };
}

describe('settings rules for MCP tools', { concurrency: true }, () => {
  test('a deny rule mcp__<server>__<tool> holds under --yes: the tool is not called, the model is told, and the run finishes', async () => {
    const { fake, repo, counts, env } = await setUp({ deny: ['mcp__counter__send_mail'] });
    const result = await runCli(['run', '--yes', '--no-sandbox', 'look up and mail'], { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);
    assertNoStack(result.stdout + result.stderr);
    assert.equal(counted(counts, 'send_mail.calls'), 0);
    assert.equal(counted(counts, 'lookup.calls'), 1);
    const [answer] = lastToolResults(fake.requests.at(-1)!);
    assert.equal(answer?.is_error, true);
    assert.match(resultText(answer!), /mcp__counter__send_mail/);
    assert.match(result.stdout, /denied by rule mcp__counter__send_mail/);
  });

  test('an allow rule mcp__<server>__* lets a destructive tool run with no terminal and no --yes', async () => {
    const { fake, repo, counts, env } = await setUp({ allow: ['mcp__counter__*'] });
    const result = await runCli(['run', '--no-sandbox', 'look up and mail'], { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(counted(counts, 'send_mail.calls'), 1);
    assert.equal(resultText(lastToolResults(fake.requests.at(-1)!)[0]!), 'sent to a@b.c');
  });
});

describe('approval of MCP tools on a terminal', { skip: SKIP_NO_PTY }, () => {
  // One run answers both ways: no (with a reason) to the first mail, yes to the second.
  test('a destructive tool is asked about: a no with a reason reaches the model, a yes runs it; the read-only one is not asked about', async () => {
    const { fake, repo, counts, env } = await setUp(undefined, [
      ...turns.slice(0, 2),
      { tools: [{ name: 'mcp__counter__send_mail', input: { to: 'ops@b.c', body: 'again' } }] },
      { text: 'done' },
    ]);
    const tty = await onPty(['run', '--no-sandbox', 'look up and mail'], repo.root, [
      { after: /Allow mcp__counter__send_mail \{"to":"a@b\.c"/, send: 'n mail goes out on Mondays\r' },
      { after: /Allow mcp__counter__send_mail \{"to":"ops@b\.c"/, send: 'y\r' },
    ], { env: env as Record<string, string> });
    const screen = plain(tty.out);
    assert.equal(tty.code, 0, screen);
    assert.doesNotMatch(screen, /Allow mcp__counter__lookup/, 'a read-only tool never asks');
    assert.match(screen, /Allow mcp__counter__send_mail \{"to":"a@b\.c","body":"hi"\}\?/);
    assert.equal(counted(counts, 'lookup.calls'), 1);
    const [refused] = lastToolResults(fake.requests[2]!);
    assert.equal(refused?.is_error, true);
    assert.match(resultText(refused!), /mail goes out on Mondays/);
    const [sent] = lastToolResults(fake.requests[3]!);
    assert.equal(resultText(sent!), 'sent to ops@b.c', 'the yes ran it');
    assert.equal(counted(counts, 'send_mail.calls'), 1, 'only the mail said yes to was sent');
  });
});
