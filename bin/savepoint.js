#!/usr/bin/env node
// The `savepoint` command. It runs dist/cli.cjs, the command line as scripts/bundle.js bundled it: in
// a clone `npm install` builds it (prepare), in the package it was built before packing (prepack).
//
// It keeps V8's compiled code of that bundle between runs, so that a start does not compile its
// 2.6 MB of JavaScript again (a resume of a 6,000-step run: 526 → 372 ms, spawn to its first
// request; docs/architecture.md, "Start-up"). Node 22.1 and later do that themselves
// (module.enableCompileCache); on Node 20 this file does it through node:vm's public API, as Node 22
// does inside. Both keep it under NODE_COMPILE_CACHE, or node-compile-cache in the system's temp
// folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off, as for any Node program. A cache that cannot be
// read or written costs only the saving.
'use strict';
// CommonJS (bin/package.json says so): Node starts a CommonJS entry without its ES module loader,
// about 10-15 ms sooner, at every command.
const { createHash } = require('node:crypto');
const {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} = require('node:fs');
const nodeModule = require('node:module');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

const bundle = join(__dirname, '..', 'dist', 'cli.cjs');
// The kinds of compiled code kept (see loadKeepingCode), the fullest first.
const KINDS = ['live', 'run', 'other'];
if (!existsSync(bundle)) {
  process.stderr.write('savepoint: the build is missing (dist/). Run "npm install" or "npm run build" in the savepoint folder first.\n');
  process.exit(1);
}
// In a clone, a stack trace (SAVEPOINT_DEBUG=1) names the lines of src/*.ts through the bundle's
// source map; the package ships none (it ships no src/), so there it names dist/ lines.
const debug = process.env.SAVEPOINT_DEBUG === '1';
if (debug) process.setSourceMapsEnabled(true);
let cli;
try {
  cli = load();
} catch (error) {
  // Loading the command line opens its files; with `ulimit -n` set very low there is no descriptor
  // left for them. Said as what to do, as the command line itself says it once it is loaded.
  if (!['EMFILE', 'ENFILE'].includes(error?.code) || debug) throw error;
  process.stderr.write(
    `savepoint ran out of open files while starting (${error.code}): raise the limit of open files, for example with "ulimit -n 1024" in this shell, then run the same command again.\n`,
  );
  process.exit(1);
}
void cli.main(process.argv);

// The bundle's exports (main, beforeCodeCache), its compiled code kept where this Node can.
function load() {
  const off = debug || process.env.NODE_DISABLE_COMPILE_CACHE === '1';
  if (!off && typeof nodeModule.enableCompileCache !== 'function') return loadKeepingCode();
  try {
    if (!off) nodeModule.enableCompileCache();
  } catch {
    // no cache: start-up compiles as before
  }
  const loaded = require(bundle);
  // Node writes its cache as the process ends, after this; a run's flags would have it refused.
  if (!off) process.once('exit', () => loaded.beforeCodeCache?.());
  return loaded;
}

// Node 20: the bundle run as node:vm script with V8's code cache, as Node's own loader would run it
// (the same wrapper, require and file name). It has no import() (scripts/bundle.js makes each a
// require()): node:vm runs none in a script whose compiled code it was given. The code kept is what
// the process compiled by its end, of one of three kinds that each cover more of the bundle: a
// reading command's (`other`), a run's (`run`: its valve, loop and tools), and a run's that called
// the model (`live`: the SDK and its request too). A kind replaces the kinds below it; otherwise a
// file is written only when none was kept or V8 refused it (made by another V8 or under other
// flags). Without `live`, a first run with a scripted model (the demo) kept code that every later
// run against the API then compiled the SDK's request beside, about 25-30 ms of CPU at each start.
function loadKeepingCode() {
  const source = readFileSync(bundle);
  // V8 checks kept code against the script's length alone: the file is named by the content, and
  // by the bundle's place, so that another checkout's savepoint keeps its own.
  const place = createHash('sha1').update(bundle).digest('hex').slice(0, 12);
  const content = createHash('sha1').update(source).digest('hex').slice(0, 20);
  const folder = join(
    process.env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache'),
    `savepoint-${process.version}-${process.arch}`,
  );
  const fileOf = (kind) => join(folder, `cli-${place}-${content}-${kind}.v8`);
  let kept;
  let keptKind;
  for (const kind of KINDS) {
    kept = readOwn(fileOf(kind));
    if (kept === undefined) continue;
    keptKind = kind;
    break;
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: bundle,
    cachedData: kept,
  });
  const loaded = { exports: {} };
  script.runInThisContext()(loaded.exports, nodeModule.createRequire(bundle), loaded, bundle, dirname(bundle));
  const refused = kept !== undefined && script.cachedDataRejected === true;
  process.once('exit', () => {
    const kind = loaded.exports.beforeCodeCache?.() ?? 'other';
    const fuller = (a, b) => KINDS.indexOf(a) < KINDS.indexOf(b);
    if (kept !== undefined && !refused && !fuller(kind, keptKind)) return;
    try {
      const file = fileOf(kind);
      keep(file, script.createCachedData());
      // Gone: an older build's files, the one V8 refused, this build's of the kinds below the one
      // kept, and the temporary file of a process killed while it wrote one (its pid in the name).
      const current = `cli-${place}-${content}-`;
      for (const name of readdirSync(folder)) {
        const path = join(folder, name);
        if (path === file || !name.startsWith(`cli-${place}-`)) continue;
        const writer = /\.v8\.(\d+)\.tmp$/.exec(name);
        if (writer) {
          if (!alive(Number(writer[1]))) rmSync(path, { force: true });
          continue;
        }
        if (!name.endsWith('.v8')) continue;
        const below = fuller(kind, name.slice(current.length, -'.v8'.length));
        if (!name.startsWith(current) || (refused && path === fileOf(keptKind)) || below) rmSync(path, { force: true });
      }
    } catch {
      // not kept: the next start compiles, as without a cache
    }
  });
  return loaded.exports;
}

// Whether process `pid` is still there (one this user cannot signal is: EPERM).
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// The bytes of `file` when this user wrote it and no one else can: compiled code runs as this
// user, and the temp folder is shared, so code another user could have put there is not used.
function readOwn(file) {
  let fd;
  try {
    fd = openSync(file, 'r');
    const { uid, mode } = fstatSync(fd);
    if (uid !== process.getuid?.() || (mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined; // none of this kind
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// Writes `data` to `file` whole or not at all: V8 does not check the bytes of kept code, so a file
// torn by a power cut must never appear under its name. The temporary file is made new ('wx'), so
// that nothing already at its name (another user's link) is written through.
function keep(file, data) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}
