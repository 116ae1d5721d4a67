// scripts/run-tests.js, the runner `npm test` is: every test gets one folder for the CLI's kept
// code (NODE_COMPILE_CACHE), inside the runner's own temporary tree, and a run against the fake
// Anthropic server has made it before the first test (test/helpers/prime-cli.ts), so that the
// code every spawned CLI finds is a run's; the tests' temporary folders are a folder of the runner's
// own on /dev/shm where that is a RAM file system programs may run from. Checked from inside a test
// the runner started; run any other way (TEST_TSX=1, or plain node --test), there is nothing of the
// runner's to check.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const build = process.env.SAVEPOINT_TEST_BUILD;
const nodeCaches = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

test(
  "the runner's tests share one folder of the CLI's kept code, made by a run before any test",
  { skip: build ? false : 'not started by scripts/run-tests.js' },
  () => {
    const folder = process.env.NODE_COMPILE_CACHE;
    assert.ok(folder, 'NODE_COMPILE_CACHE is set for the tests');
    assert.ok(!relative(build!, folder).startsWith('..'), `${folder} is inside the runner's temporary tree ${build}, removed with it`);
    assert.ok(existsSync(folder), `${folder} was made before the tests`);
    const kept = readdirSync(folder, { recursive: true }).map(String);
    if (nodeCaches) {
      assert.ok(kept.length > 0, `Node's compile cache under ${folder} holds the CLI's code`);
      return;
    }
    // bin/savepoint.js on Node 20: one file per build, named for the kind of command that made it:
    // `live`, a run that called the model (the runner's first run, against the fake server). Only a
    // file V8 refused would be written again, so it stays while the tests run.
    const runs = kept.filter((name) => /(^|\/)cli-[0-9a-f]{12}-[0-9a-f]{20}-live\.v8$/.test(name));
    assert.equal(
      runs.length,
      1,
      `the kept code under ${folder} is a model-calling run's (the model client, the valve and the tools compiled): ${kept.join(', ')}`,
    );
    assert.ok(existsSync(join(folder, runs[0]!)));
  },
);

test(
  "the tests' temporary folder is the runner's own on /dev/shm when that is a RAM file system programs run from",
  { skip: build ? false : 'not started by scripts/run-tests.js' },
  () => {
    let options: string | undefined;
    try {
      const shm = readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .map((line) => line.split(' '))
        .find(([, where, type]) => where === '/dev/shm' && type === 'tmpfs');
      options = shm?.[3];
    } catch {
      // no /proc/mounts: not Linux
    }
    const ram = options !== undefined && !options.split(',').includes('noexec') && process.env.TEST_TMPDIR !== 'system';
    if (!ram) {
      assert.doesNotMatch(tmpdir(), /^\/dev\/shm\//, "the system's temporary folder");
      return;
    }
    assert.match(tmpdir(), /^\/dev\/shm\/savepoint-tests-[^/]+$/);
    assert.ok(existsSync(tmpdir()), `${tmpdir()} was made before the tests`);
    assert.equal(statSync(tmpdir()).mode & 0o7777, 0o1777, 'open to every user and sticky, as /tmp is');
  },
);
