// The journal stays pushable to a host that checks pushes: the agent makes `.gitmodules` a symbolic
// link and writes another whose url reads as an option, and the run, pushing after every step to a
// bare remote with receive.fsckObjects=true (as GitHub checks), is never refused; the checkpoint
// leaves those files out with a note in the step, and git fsck --strict finds nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { runCli } from '../helpers/cli.js';
import { projectAt } from '../helpers/hostile-tree.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('a .gitmodules symlink and a .gitmodules url that reads as an option are left out, and every push to a checking remote is taken', async () => {
  const { dir, root } = await projectAt(() => scratch.dir('savepoint-fsck-'));
  const remote = join(dir, 'remote.git');
  await gitOut(dir, ['init', '-q', '--bare', remote]);
  await gitOut(remote, ['config', 'receive.fsckObjects', 'true']);
  await gitOut(root, ['remote', 'add', 'origin', remote]);
  const command = "ln -s README.md .gitmodules && mkdir d && printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = --upload-pack=touch /tmp/y\\n' > d/.gitmodules && ln -s README.md .gitattributes && echo made";
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command } }] }, { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'done' }] }));
  const result = await runCli(['run', '--yes', '--push', 'origin', '--model', `script:${script}`, 'make gitmodules'], { cwd: root });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /exit 0: made/);
  assert.equal(await gitOut(remote, ['rev-parse', 'agent-journal']), await gitOut(root, ['rev-parse', 'agent-journal']), 'every step reached the remote');
  await gitOut(remote, ['fsck', '--strict', '--no-progress']);
  await gitOut(root, ['fsck', '--strict', '--no-progress']);
  const files = (await gitOut(root, ['ls-tree', '-r', '--name-only', 'agent-journal'])).split('\n');
  const step = files.find((f) => f.endsWith('000002-run_bash.json'))!;
  const entry = JSON.parse(await gitOut(root, ['show', `agent-journal:${step}`])) as { checkpointSkipped?: Array<{ path: string; reason: string }> };
  const skipped = Object.fromEntries((entry.checkpointSkipped ?? []).map((s) => [s.path, s.reason]));
  assert.match(skipped['.gitmodules'] ?? '', /symbolic link named \.gitmodules, which git fsck rejects/);
  assert.match(skipped['d/.gitmodules'] ?? '', /url or path reads as an option/);
  assert.match(skipped['.gitattributes'] ?? '', /symbolic link named \.gitattributes/);
  assert.ok(!files.some((f) => /(^|\/)worktree\/(d\/)?\.git(modules|attributes)$/.test(f)), 'no such file is in the journal');
});
