// The command keeps V8's compiled code of its bundle between runs (bin/savepoint.js): on Node 22.1
// and later through module.enableCompileCache, on Node 20 through node:vm's code cache. The real
// CLI, run with a temp folder of its own: it leaves its compiled code under
// TMPDIR/node-compile-cache, NODE_DISABLE_COMPILE_CACHE=1 leaves none, and a temp folder that cannot
// be made costs nothing but the saving (the command works and says nothing about it). On Node 20,
// what is kept is checked too: kept code is used, not written again; a run's code replaces a reading
// command's, and a run's that called the model replaces a run's that did not; a file V8 refuses is written anew, the command unharmed; an older build's file goes;
// another user's file is not run (as root only: it makes one).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fakeEnv, runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const nodeCaches = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

// Every file under `dir`, as paths.
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('compiled code kept between runs', () => {
  test("a run of the CLI leaves its compiled code in Node's cache folder under TMPDIR, and the next run still works", async () => {
    const repo = await scratch.repo();
    const temp = scratch.dir('savepoint-compile-cache-');
    for (let i = 0; i < 2; i++) {
      const listed = await runCli(['--help'], { cwd: repo.root, env: { TMPDIR: temp, NODE_COMPILE_CACHE: undefined } });
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /Usage: savepoint/);
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

describe(
  'compiled code kept by savepoint itself on Node 20',
  { skip: nodeCaches ? `Node ${process.version} keeps it itself (module.enableCompileCache)` : false },
  () => {
    test("kept code is used and not written again; a run's replaces a reading command's, a model-calling run's a scripted one's; a refused file is written anew; an older build's goes", async () => {
      const repo = await scratch.repo({ 'notes.txt': 'one\n' });
      const folder = scratch.dir('savepoint-compile-cache-');
      const env = { NODE_COMPILE_CACHE: folder };
      const kept = () => filesUnder(folder).filter((path) => path.endsWith('.v8'));
      const only = (kind: string) => {
        const files = kept();
        assert.equal(files.length, 1, `one file of kept code: ${files.join(', ')}`);
        assert.match(basename(files[0]!), new RegExp(`^cli-[0-9a-f]{12}-[0-9a-f]{20}-${kind}\\.v8$`));
        return files[0]!;
      };
      const help = async () => {
        const listed = await runCli(['--help'], { cwd: repo.root, env });
        assert.equal(listed.code, 0, listed.stderr);
        assert.equal(listed.stderr, '');
        return listed.stdout;
      };

      // A reading command keeps its code; the next one uses it: the same file, not written again.
      const first = await help();
      const reading = only('other');
      const written = statSync(reading);
      assert.equal(await help(), first);
      assert.deepEqual(
        [statSync(reading).ino, statSync(reading).mtimeMs],
        [written.ino, written.mtimeMs],
        'kept code used, not written again',
      );

      // A command that drives a run compiles more of the bundle (the model client, the valve, the
      // tools): its code replaces the reading command's, and is used by the next command as it is.
      const script = join(repo.root, '.git', 'turns.json');
      writeFileSync(script, JSON.stringify({ turns: [{ text: 'Nothing to do.' }] }));
      const run = await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'say hello'], { cwd: repo.root, env });
      assert.equal(run.code, 0, run.stderr);
      const driving = only('run');
      const drivingWritten = statSync(driving);
      assert.ok(
        drivingWritten.size > written.size,
        `a run's code (${drivingWritten.size} bytes) covers more than a reading command's (${written.size})`,
      );
      assert.equal(await help(), first);
      assert.equal(statSync(driving).mtimeMs, drivingWritten.mtimeMs, "a run's code is kept by a reading command as it is");

      // A run that called the model compiled its client too (the SDK's request): its code replaces
      // the scripted run's (the demo's, say), and a scripted run after it keeps it as it is.
      const fake = await scratch.fake([{ text: 'Hello.' }]);
      const live = await runCli(['run', '--yes', '--no-sandbox', 'say hello through the API'], {
        cwd: repo.root,
        env: { ...env, ...fakeEnv(fake) },
      });
      assert.equal(live.code, 0, live.stderr);
      const calling = only('live');
      const callingWritten = statSync(calling);
      const scripted = await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'say hello, scripted'], {
        cwd: repo.root,
        env,
      });
      assert.equal(scripted.code, 0, scripted.stderr);
      assert.equal(only('live'), calling);
      assert.equal(statSync(calling).mtimeMs, callingWritten.mtimeMs, "a model-calling run's code is kept by a scripted run as it is");

      // Bytes V8 refuses (made by another V8, or damaged): the command works as ever and writes them anew.
      writeFileSync(calling, 'not compiled code');
      assert.equal(await help(), first);
      const rewritten = only('other');
      assert.notEqual(readFileSync(rewritten, 'latin1'), 'not compiled code');

      // An older build's file (another content, the same place) goes when this build keeps its own,
      // and so does the temporary file of a writer killed mid-write (its pid gone); a live writer's stays.
      const older = join(dirname(rewritten), basename(rewritten).replace(/-[0-9a-f]{20}-/, `-${'0'.repeat(20)}-`));
      writeFileSync(older, 'an older build');
      const gone = spawnSync(process.execPath, ['-e', '']).pid!;
      const torn = `${rewritten.replace(/-other\.v8$/, '-run.v8')}.${gone}.tmp`;
      const writing = `${rewritten.replace(/-other\.v8$/, '-run.v8')}.${process.pid}.tmp`;
      writeFileSync(torn, 'half written');
      writeFileSync(writing, 'being written');
      const again = await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'say hello again'], {
        cwd: repo.root,
        env,
      });
      assert.equal(again.code, 0, again.stderr);
      const ours = only('run');
      assert.equal(existsSync(older), false, "an older build's kept code is removed");
      assert.equal(existsSync(torn), false, "a killed writer's temporary file is removed");
      assert.equal(existsSync(writing), true, "a live writer's temporary file is left to it");
      rmSync(writing);

      // Kept code that another user owns, or that others may write, is not run: the temp folder is
      // shared. Such a file is left alone, and this user's own code is kept beside it.
      if (process.getuid?.() !== 0) return;
      chownSync(ours, 65534, 65534);
      assert.equal(await help(), first);
      const own = kept().filter((path) => statSync(path).uid === 0);
      assert.equal(own.length, 1, `this user keeps code of its own beside another's: ${kept().join(', ')}`);
      assert.match(basename(own[0]!), /-other\.v8$/);
      assert.equal(statSync(ours).uid, 65534, "another user's file is not rewritten");
    });
  },
);
