// Project instructions: AGENTS.md at the repository root (else CLAUDE.md) is read when a run is
// created and pinned into its system prompt. Editing it later does not change that run; a new run
// picks the edit up; `log --json` and `show <run> config` say what the run was told. An AGENTS.md that
// links out of the repository is left out (never in the prompt, run.json or the journal), and said.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfig } from '../../../src/journal/entry.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertStepModes, fakeEnv, runCli } from '../../helpers/cli.js';
import { gitOut, journalFile } from '../../helpers/git.js';

const scratch = useScratch();

const READ_THEN_ANSWER = [{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read.' }];

const systemOf = (body: { system?: unknown }) => JSON.stringify(body.system);

describe('project instructions', { concurrency: true }, () => {
  test('AGENTS.md is pinned into the system prompt when the run is created; a later edit reaches new runs only', async () => {
    const repo = await scratch.repo({ 'README.md': '# told\n', 'AGENTS.md': 'Always run the tests with `npm run check`.\n', 'CLAUDE.md': 'Never read this one.\n' });
    const fake = await scratch.fake(READ_THEN_ANSWER);
    const task = 'read the readme';
    const first = await runCli(['run', '--yes', '--max-turns', '1', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 3, first.stderr);
    assert.match(first.stdout, /Project instructions: AGENTS\.md, pinned into this run's system prompt/);
    assert.match(systemOf(fake.requests[0]!), /Project instructions \(from AGENTS\.md\)/);
    assert.match(systemOf(fake.requests[0]!), /npm run check/);
    assert.doesNotMatch(systemOf(fake.requests[0]!), /Never read this one/);

    writeFileSync(join(repo.root, 'AGENTS.md'), 'Always run the tests with `make test`.\n');
    const resumed = await runCli(['run', '--yes', '--keep-worktree', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertStepModes(resumed.stdout, 2);
    assert.equal(fake.requests.length, 2);
    assert.match(systemOf(fake.requests[1]!), /npm run check/, 'the resumed run sends what it was told when it was created');
    assert.doesNotMatch(systemOf(fake.requests[1]!), /make test/);

    const id = /run (\S+)/.exec(first.stdout)![1]!;
    const log = await runCli(['log', '--json', id], { cwd: repo.root });
    assert.equal(log.code, 0, log.stderr);
    const config = (JSON.parse(log.stdout) as { config: RunConfig }).config;
    assert.match(config.system, /npm run check/);
    assert.deepEqual(config.instructions, { file: 'AGENTS.md', chars: 'Always run the tests with `npm run check`.\n'.length });
    const shown = await runCli(['show', id, 'config'], { cwd: repo.root });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /instructions\s+AGENTS\.md \(43 characters\), in the system prompt/);
    assert.match(shown.stdout, /System prompt\n[\s\S]*Always run the tests with `npm run check`/);

    const fresh = await runCli(['run', '--yes', '--fresh', '--keep-worktree', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.match(systemOf(fake.requests[2]!), /make test/, 'a new run picks up the edit');
  });

  test('CLAUDE.md is used when there is no AGENTS.md, and a run with neither is told none', async () => {
    const repo = await scratch.repo({ 'README.md': '# claude\n', 'CLAUDE.md': 'Prefer small commits.\n' });
    const fake = await scratch.fake([{ text: 'Fine.' }]);
    const run = await runCli(['run', '--yes', 'say fine'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr);
    assert.match(systemOf(fake.requests[0]!), /Project instructions \(from CLAUDE\.md\)\\n\\nPrefer small commits\./);

    const bare = await scratch.repo({ 'README.md': '# none\n' });
    const none = await runCli(['run', '--yes', 'say fine'], { cwd: bare.root, env: fakeEnv(fake) });
    assert.equal(none.code, 0, none.stderr);
    assert.doesNotMatch(systemOf(fake.requests[1]!), /Project instructions/);
    const id = /run (\S+)/.exec(none.stdout)![1]!;
    const shown = await runCli(['show', id, 'config'], { cwd: bare.root });
    assert.match(shown.stdout, /instructions\s+none/);
  });

  test("run from a subfolder, the user's AGENTS.md, the root's and the subfolder's are pinned, the more general first", async () => {
    const repo = await scratch.repo({ 'README.md': '# nested\n', 'AGENTS.md': 'Root rule.\n', 'web/AGENTS.md': 'Web rule.\n', 'web/app.js': '1\n' });
    const config = scratch.dir('savepoint-xdg-');
    mkdirSync(join(config, 'savepoint'));
    writeFileSync(join(config, 'savepoint', 'AGENTS.md'), 'My own rule.\n');
    const fake = await scratch.fake([{ text: 'Fine.' }]);
    const run = await runCli(['run', '--yes', 'say fine'], { cwd: join(repo.root, 'web'), env: fakeEnv(fake, { XDG_CONFIG_HOME: config }) });
    assert.equal(run.code, 0, run.stderr);
    const system = systemOf(fake.requests[0]!);
    assert.match(system, /Project instructions \(from [^)]*savepoint\/AGENTS\.md, AGENTS\.md, web\/AGENTS\.md\)/);
    assert.ok(system.indexOf('My own rule') < system.indexOf('Root rule') && system.indexOf('Root rule') < system.indexOf('Web rule'), system);
  });

  test('an AGENTS.md that links out of the repository (to a stand-in for ~/.netrc) is left out of the prompt and the journal, and said; a link inside it is read', async () => {
    const secret = 'machine deploy.example.com login ci password hunter2-standin-7f3e';
    const outside = scratch.dir('savepoint-home-');
    writeFileSync(join(outside, 'netrc-standin'), `${secret}\n`);
    const repo = await scratch.repo({ 'README.md': '# linked\n', 'docs/web-rules.md': 'Web rule, linked from inside.\n', 'web/app.js': '1\n' });
    symlinkSync(join(outside, 'netrc-standin'), join(repo.root, 'AGENTS.md'));
    symlinkSync('../docs/web-rules.md', join(repo.root, 'web', 'AGENTS.md'));
    const fake = await scratch.fake([{ text: 'Fine.' }]);
    const run = await runCli(['run', '--yes', 'say fine'], { cwd: join(repo.root, 'web'), env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /AGENTS\.md is left out of this run's prompt: it resolves to \S*netrc-standin, outside the\s+repository/);
    assert.match(run.stdout, /Project instructions: web\/AGENTS\.md, pinned/);
    const system = systemOf(fake.requests[0]!);
    assert.ok(!system.includes('hunter2'), system);
    assert.match(system, /Web rule, linked from inside\./, 'a link to a file inside the repository is read');

    const id = /run (\S+)/.exec(run.stdout)![1]!;
    const record = await journalFile(repo.root, `runs/${id}/run.json`);
    assert.match(record, /Web rule, linked from inside/);
    assert.ok(!record.includes('hunter2'), 'run.json, which a push sends to the remote, never holds it');
    assert.equal(await gitOut(repo.root, ['log', '-p', '--all', '-S', 'hunter2', '--format=%H']), '', 'no commit of the journal holds it');

    const json = await runCli(['run', '--yes', '--fresh', '--json', 'say fine'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(json.code, 0, json.stderr);
    const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; file?: string; within?: string; target?: string });
    assert.deepEqual(events.slice(0, 2).map((e) => e.type), ['run-started', 'instructions-left-out']);
    assert.equal(events[1]!.file, 'AGENTS.md');
    assert.equal(events[1]!.within, 'repository');
    assert.match(events[1]!.target!, /netrc-standin$/);
    assert.ok(!systemOf(fake.requests[1]!).includes('hunter2'));
  });
});
