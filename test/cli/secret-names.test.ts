// A secret in a symbolic link's target reaches the journal redacted, like a secret in a file's
// content: the link in the working tree keeps the real target (redaction guards the journal, never
// the user's files), and no object reachable from agent-journal holds the value.
import assert from 'node:assert/strict';
import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const SECRET = `dpl-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;

test('a symbolic link whose target holds a secret is recorded with the secret redacted', async () => {
  const repo = await scratch.repo({ 'README.md': '# project\n' });
  const script = join(scratch.dir('savepoint-link-'), 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command: `ln -s "/vault/${SECRET}/key" keylink && echo linked` } }] }, { text: 'done' }] }));
  const result = await runCli(['run', '--yes', '--model', `script:${script}`, 'link the key'], { cwd: repo.root, env: { DEPLOY_TOKEN: SECRET } });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.equal(readlinkSync(join(repo.root, 'keylink')), `/vault/${SECRET}/key`, 'the link itself is as the command made it');
  const files = (await gitOut(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal'])).split('\n');
  const link = files.find((f) => f.endsWith('/worktree/keylink'));
  assert.ok(link, 'the link is in the checkpoint');
  const target = await gitOut(repo.root, ['cat-file', 'blob', `agent-journal:${link}`]);
  assert.equal(target, '/vault/[REDACTED:DEPLOY_TOKEN]/key');
  const everything = await gitOut(repo.root, ['log', '-p', '--all', '--format=%B']);
  assert.ok(!everything.includes(SECRET), 'the secret appears nowhere in the journal');
});
