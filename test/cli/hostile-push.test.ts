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

// `command` run by a scripted model (then a write, then the answer) in a project whose remote checks
// every push (receive.fsckObjects, as GitHub does): each step reached the remote, git fsck --strict is
// clean on both sides, and the journal's files and the command step's skipped entries are handed back.
async function runPushing(command: string, task: string): Promise<{ files: string[]; skipped: Record<string, string> }> {
  const { dir, root } = await projectAt(() => scratch.dir('savepoint-fsck-'));
  const remote = join(dir, 'remote.git');
  await gitOut(dir, ['init', '-q', '--bare', remote]);
  await gitOut(remote, ['config', 'receive.fsckObjects', 'true']);
  await gitOut(root, ['remote', 'add', 'origin', remote]);
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command } }] }, { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'done' }] }));
  const result = await runCli(['run', '--yes', '--push', 'origin', '--model', `script:${script}`, task], { cwd: root });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /exit 0: made/);
  assert.equal(await gitOut(remote, ['rev-parse', 'agent-journal']), await gitOut(root, ['rev-parse', 'agent-journal']), 'every step reached the remote');
  await gitOut(remote, ['fsck', '--strict', '--no-progress']);
  await gitOut(root, ['fsck', '--strict', '--no-progress']);
  const files = (await gitOut(root, ['ls-tree', '-r', '--name-only', '-z', 'agent-journal'])).split('\0');
  const step = files.find((f) => f.endsWith('000002-run_bash.json'))!;
  const entry = JSON.parse(await gitOut(root, ['show', `agent-journal:${step}`])) as { checkpointSkipped?: Array<{ path: string; reason: string }> };
  return { files, skipped: Object.fromEntries((entry.checkpointSkipped ?? []).map((s) => [s.path, s.reason])) };
}

test('a .gitmodules symlink and a .gitmodules url that reads as an option are left out, and every push to a checking remote is taken', async () => {
  const command = "ln -s README.md .gitmodules && mkdir d && printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = --upload-pack=touch /tmp/y\\n' > d/.gitmodules && ln -s README.md .gitattributes && echo made";
  const { files, skipped } = await runPushing(command, 'make gitmodules');
  assert.match(skipped['.gitmodules'] ?? '', /symbolic link named \.gitmodules, which git fsck rejects/);
  assert.match(skipped['d/.gitmodules'] ?? '', /url reads as an option/);
  assert.match(skipped['.gitattributes'] ?? '', /symbolic link named \.gitattributes/);
  assert.ok(!files.some((f) => /(^|\/)worktree\/(d\/)?\.git(modules|attributes)$/.test(f)), 'no such file is in the journal');
});

test('spellings git takes for .gitmodules (NTFS, HFS+), an update that runs a command and a .gitattributes line too long are left out, and every push is taken', async () => {
  const bad = "'[submodule \"x\"]\\n\\tpath = x\\n\\turl = -u./payload\\n'";
  const command = [
    `mkdir e f g h && printf ${bad} > .GITMODULES && printf ${bad} > 'e/.gitmodules .' && printf ${bad} > 'e/GITMOD~1'`,
    `ln -s ../README.md "$(printf 'f/.git\\342\\200\\214modules')"`,
    `printf '[submodule "y"]\\n\\tpath = y\\n\\turl = https://example.com/y\\n\\tupdate = !sh evil\\n' > g/.gitmodules`,
    `head -c 3000 /dev/zero | tr '\\0' a > g/.gitattributes`,
    `printf '[submodule "z"]\\n\\tpath = z\\n\\turl = https://example.com/z\\n' > h/.gitmodules && echo made`,
  ].join(' && ');
  const { files, skipped } = await runPushing(command, 'spell gitmodules');
  assert.match(skipped['.GITMODULES'] ?? '', /url reads as an option/);
  assert.match(skipped['e/.gitmodules .'] ?? '', /\.gitmodules \(spelled "\.gitmodules \."\) whose url reads as an option/);
  assert.match(skipped['e/GITMOD~1'] ?? '', /url reads as an option/);
  assert.match(skipped['f/.git\u200cmodules'] ?? '', /symbolic link named \.gitmodules/);
  assert.match(skipped['g/.gitmodules'] ?? '', /update runs a command/);
  assert.match(skipped['g/.gitattributes'] ?? '', /line of 2048 bytes or more/);
  assert.equal(skipped['h/.gitmodules'], undefined, 'a .gitmodules fsck accepts is recorded');
  assert.ok(files.some((f) => f.endsWith('worktree/h/.gitmodules')));
});
