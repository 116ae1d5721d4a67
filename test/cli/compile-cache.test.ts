// The command keeps V8's compiled code of its bundle between runs on Node 22.1 and later
// (bin/savepoint.js, module.enableCompileCache): the real CLI, run twice with a temp folder of its
// own, leaves Node's cache there; NODE_DISABLE_COMPILE_CACHE=1 leaves none; a temp folder that
// cannot be made costs nothing but the saving (the command works and says nothing about it).
// Older Node has no such call: there the test skips, saying so.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const unsupported = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function' ? false : `Node ${process.version} has no module.enableCompileCache (Node 22.1 and later have)`;

// Every file under `dir`, as paths relative to it.
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('compiled code kept between runs', { skip: unsupported }, () => {
  test('a run of the CLI leaves its compiled code in Node\'s cache folder under TMPDIR, and the next run still works', async () => {
    const repo = await scratch.repo();
    const temp = scratch.dir('savepoint-compile-cache-');
    for (let i = 0; i < 2; i++) {
      const listed = await runCli(['--help'], { cwd: repo.root, env: { TMPDIR: temp, NODE_COMPILE_CACHE: undefined } });
      assert.equal(listed.code, 0, listed.stderr);
    }
    const cached = filesUnder(join(temp, 'node-compile-cache'));
    assert.ok(cached.length > 0, `no compiled code under ${temp}/node-compile-cache`);
  });

  test('NODE_DISABLE_COMPILE_CACHE=1 keeps none; a temp folder that cannot be made changes nothing the person sees', async () => {
    const repo = await scratch.repo();
    const temp = scratch.dir('savepoint-compile-cache-');
    const off = await runCli(['--help'], { cwd: repo.root, env: { TMPDIR: temp, NODE_DISABLE_COMPILE_CACHE: '1' } });
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(filesUnder(temp), []);

    // A file where the folder should be: no cache can be made there, even by root.
    const locked = join(scratch.dir('savepoint-compile-cache-'), 'not-a-folder');
    writeFileSync(locked, '');
    const plain = await runCli(['--help'], { cwd: repo.root, env: { TMPDIR: temp, NODE_DISABLE_COMPILE_CACHE: '1' } });
    const readOnly = await runCli(['--help'], { cwd: repo.root, env: { TMPDIR: locked, NODE_COMPILE_CACHE: undefined } });
    assert.equal(readOnly.code, 0, readOnly.stderr);
    assert.equal(readOnly.stderr, plain.stderr);
    assert.equal(readOnly.stdout, plain.stdout);
  });
});
