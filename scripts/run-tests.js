#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner, because Node 20's `--test` does not
// expand globs itself. Extra arguments are passed on, so `npm test -- --test-name-pattern=divergence`
// works. A file list may be given (`node scripts/run-tests.js test/cli/usage.test.ts`).
//
// Why compile first: the runner starts one Node process per test file, and through tsx each of them
// resolved and transpiled test/, its helpers and the hundreds of modules of src/ it imports, through
// tsx's loader thread: about a second of start-up per file before its first test (185 files), paid
// again in every file. Here esbuild transforms test/ and src/ once, file for file (no bundle, so each
// module stays the module it was: the same imports, the same lazy import()s), into a temporary
// folder, and the runner runs plain `node` on that. Each file's `import.meta.url` is its own source
// file's address, so that a test finds its fixtures, bin/savepoint.js and src/*.ts where they are.
// The output carries inline source maps and Node runs with --enable-source-maps: a failure's stack
// names test/*.ts and src/*.ts lines. TEST_TSX=1 runs the old way (tsx, no compile step).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const collect = (dir, keep) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path, keep);
    return keep(path) ? [relative(root, path)] : [];
  });
/**
 * The loader of a bundled test server `bundle` (CommonJS): runs it with V8's code cache from
 * `<bundle>.cache` when there is one; with SAVEPOINT_TEST_PRIME=1 it compiles without and writes
 * that cache as it exits, with every function the start compiled.
 */
const serverLoader = (bundle) => `// Written by scripts/run-tests.js: starts ${basename(bundle)} with V8's code cache.
import Module, { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

const bundle = ${JSON.stringify(bundle)};
const prime = process.env.SAVEPOINT_TEST_PRIME === '1';
let cachedData;
try {
  if (!prime) cachedData = readFileSync(bundle + '.cache');
} catch {
  // no cache: compiled as it runs
}
const script = new Script(Module.wrap(readFileSync(bundle, 'utf8').replace(/^#!.*/, '')), { filename: bundle, cachedData });
if (prime) process.on('exit', () => writeFileSync(bundle + '.cache', script.createCachedData()));
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
`;
const isTestFile = (path) => path.endsWith('.test.ts') && !path.split(sep).some((part) => part === 'helpers' || part === 'fixtures');

const args = process.argv.slice(2);
const files = args.filter((a) => a.endsWith('.ts'));
const flags = args.filter((a) => !a.endsWith('.ts'));
const targets = files.length ? files : collect(join(root, 'test'), isTestFile).sort();
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// TAP on stdout as before, then scripts/test-summary.js's failures and slowest files after it.
const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${pathToFileURL(join(root, 'scripts', 'test-summary.js')).href}`,
  '--test-reporter-destination=stdout',
];

// NODE_EXTRA_CA_CERTS makes Node 20 read and parse the certificates it names as each process starts,
// before any of its code runs: with the system's whole bundle (as this project's machines set it, for
// the package registry) that is 150-180 ms of CPU in every test file's process and in every CLI a test
// spawns, about a thousand of them. No test reaches the network (the model and web pages are local
// HTTP servers); the two that trust a certificate of their own (test/model/proxy.test.ts,
// anthropic-cli.test.ts) set the variable themselves.
delete process.env.NODE_EXTRA_CA_CERTS;

// Where the tests' temporary folders go (TMPDIR for every test and the CLIs, bash and git they start):
// a folder of the runner's own on /dev/shm when it is a RAM file system that allows programs to run,
// else the system's. The suite makes and removes tens of thousands of files there (a repository
// for almost every test, git's objects, checkpoints, journals), and on this project's machines /tmp
// is on an ext4 root without a journal, where each new inode is searched for past the ones deleted
// recently: creating files was a tenth of the whole suite's CPU (perf), and with TMPDIR on tmpfs the
// whole suite took 17% less CPU (244-250 s → 205-208 s; system time 88-90 s → 57 s). The compiled tree above stays under
// /tmp: the sandbox binds a program under /tmp (the MCP servers' bundles) into its private /tmp.
// Where the disk is the point, the tests keep a disk: a full disk and a power cut make file systems
// of their own, and the files whose subject is a disk's stat (inode numbers, which ext4 reuses at
// once after a delete and tmpfs never does) import test/helpers/on-disk.ts, which puts theirs back
// in the system's temporary folder. TEST_TMPDIR=system keeps the system's for every test.
function ramScratch() {
  if (process.env.TEST_TMPDIR === 'system') return undefined;
  try {
    const shm = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find(([, where, type]) => where === '/dev/shm' && type === 'tmpfs');
    if (!shm || shm[3].split(',').includes('noexec')) return undefined;
    // Open to every user, sticky, as /tmp is: a test runs the CLI as another user (nobody) in a
    // folder of its own there (test/journal/discovery.test.ts).
    const dir = mkdtempSync('/dev/shm/savepoint-tests-');
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined; // not Linux, or no room: the system's temporary folder
  }
}

if (process.env.TEST_TSX === '1') {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...flags, ...targets], {
    cwd: root,
    stdio: 'inherit',
  });
  process.exit(result.status ?? 1);
}

const { build } = await import('esbuild');
const out = mkdtempSync(join(tmpdir(), 'savepoint-tests-'));
const scratch = ramScratch();
let status = 1;
try {
  // The compiled modules are ES modules (package.json "type") and find the packages where the
  // sources do (node_modules beside them).
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(out, 'node_modules'), 'dir');
  const sources = [...collect(join(root, 'src'), (p) => p.endsWith('.ts')), ...collect(join(root, 'test'), (p) => p.endsWith('.ts'))];
  // import.meta.url → the source file's own address (a string literal, as tsx would give it).
  const ownUrl = {
    name: 'source-module-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (loaded) => {
        const code = readFileSync(loaded.path, 'utf8');
        if (!code.includes('import.meta.url')) return undefined;
        return { contents: code.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(loaded.path).href)), loader: 'ts', resolveDir: dirname(loaded.path) };
      });
    },
  };
  const compiling = build({
    entryPoints: sources.map((p) => join(root, p)),
    outdir: out,
    outbase: root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'error',
    plugins: [ownUrl],
  });
  // The tests' own MCP servers (test/tools/mcp/fixtures/*.mjs) start as a child process in every MCP
  // scenario, and each start loaded the MCP SDK, zod and ajv module by module from node_modules and
  // compiled them: about 0.43 s of CPU a start. Here each is bundled into one CommonJS file (the same
  // SDK code, over the same stdio; the bundling runs beside the compile), started by a small loader
  // at the fixture's own name that hands V8 the code cache of a first start: about 0.13 s a start.
  // That first start is made here, once, before any test runs (an `initialize` answered, then its
  // input ends), so no two servers ever write the cache. test/helpers/library.ts (bundledFixture)
  // finds the loaders at the fixtures' relative places in the compiled tree. Under the sandbox, a
  // program under /tmp is bound read-only (src/tools/sandbox.ts, programFolders), so a sandboxed
  // server still finds its files.
  const servers = join(root, 'test', 'tools', 'mcp', 'fixtures');
  const serverNames = readdirSync(servers).filter((name) => name.endsWith('.mjs'));
  const serversOut = join(out, 'test', 'tools', 'mcp', 'fixtures');
  const bundling = build({
    entryPoints: serverNames.map((name) => join(servers, name)),
    outdir: serversOut,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  await Promise.all([compiling, bundling]);
  // The CLI keeps V8's compiled code of its bundle (bin/savepoint.js), in NODE_COMPILE_CACHE or the
  // system's temp folder, and writes it once: the first run that finds none keeps what it compiled.
  // The suite spawns the CLI about a thousand times, most of them runs against the fake Anthropic
  // server, which compile the SDK and Node's fetch unless the kept code holds them. So the run gets
  // a folder of its own (removed with the rest), and one such run makes its code first
  // (test/helpers/prime-cli.ts), beside the MCP servers' first starts below; no test then depends
  // on what a machine's temp folder held or on which test ran first. test/cli/compile-cache.test.ts
  // gives its CLIs a TMPDIR or a NODE_COMPILE_CACHE of their own, so it still tests the bin's own
  // choices.
  process.env.NODE_COMPILE_CACHE = join(out, 'node-compile-cache');
  const primingCli = new Promise((done) => {
    const child = spawn(process.execPath, [join(out, 'test', 'helpers', 'prime-cli.js')], { cwd: root, stdio: 'ignore' });
    child.on('error', done);
    child.on('close', done);
  });
  for (const name of serverNames) {
    const loader = join(serversOut, name);
    writeFileSync(loader, serverLoader(join(serversOut, name.replace(/\.mjs$/, '.cjs'))));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'run-tests', version: '1' } } };
    // A cache that could not be made only costs the saving: the loader compiles without one.
    spawnSync(process.execPath, [loader], { input: `${JSON.stringify(initialize)}\n`, env: { ...process.env, SAVEPOINT_TEST_PRIME: '1' }, timeout: 60_000 });
  }
  await primingCli;
  // A file named relative to the current folder or absolute: its place in the compiled tree.
  const compiled = targets.map((t) => join(out, relative(root, resolve(t)).replace(/\.ts$/, '.js')));
  // SAVEPOINT_TEST_BUILD: where a test finds the compiled file of a .ts fixture or module it starts
  // as a child process of its own (test/helpers/library.ts, tsChild), instead of going through tsx.
  const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...flags, ...compiled], {
    cwd: root,
    stdio: 'inherit',
    // The system's stays named, for the files whose subject is a disk's stat (test/helpers/on-disk.ts).
    env: { ...process.env, SAVEPOINT_TEST_BUILD: out, ...(scratch ? { TMPDIR: scratch, SAVEPOINT_TEST_DISK_TMPDIR: tmpdir() } : {}) },
  });
  status = result.status ?? 1;
} finally {
  rmSync(out, { recursive: true, force: true });
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
