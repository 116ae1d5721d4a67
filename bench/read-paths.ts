// The candidates for the journal's one read path, side by side on the same journal, for what a
// person waits on: a resume reading a run's entries one at a time, `log`/`show` reading them all at
// once, and a checkpoint restore reading a checkpoint's trees and blobs. The candidates:
//   - savepoint's own pack reader with loose files (src/git/pack-reader.ts, git-object.ts);
//   - one long-lived `git cat-file --batch` (a read is a line written and its answer parsed;
//     all at once, every id written with --buffer and the answers parsed as they stream);
//   - isomorphic-git's readObject (with its pack-index cache).
// Each on the journal as a run leaves it (an append's small packs rolled up) and after `git gc`.
// Run alone: `node --import tsx bench/read-paths.ts [--quick] [--keep]` (REPO=<dir> reuses a
// repository it kept). isomorphic-git is loaded from the path ISOGIT names when it is set (it is no
// longer a dependency: docs/architecture.md says why).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ObjectStore } from '../src/git/object-store.js';
import { parseTree, TREE_MODE } from '../src/git/git-object.js';
import { JournalStore } from '../src/journal/store.js';
import { listRunIds, listRunStepFiles } from '../src/journal/reader.js';
import { createBenchRepo, now, percentile, runAlone, type BenchContext, type Row } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
const ROUNDS = 5;

type Reader = { name: string; read(oid: string, type?: 'blob' | 'tree'): Promise<Buffer>; all(oids: string[], onBody: (b: Buffer) => void): Promise<void>; close(): void };

// One long-lived `git cat-file --batch`: reads queued in order, each answer parsed as it streams.
function catFileReader(gitdir: string): Reader {
  const child = spawn('git', ['--git-dir', gitdir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting: Array<(body: Buffer) => void> = [];
  let pending: Buffer = Buffer.alloc(0);
  let want = -1;
  child.stdout.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (want < 0) {
        const nl = pending.indexOf(10);
        if (nl < 0) return;
        want = Number(pending.subarray(0, nl).toString('latin1').split(' ')[2]);
        pending = pending.subarray(nl + 1);
      }
      if (pending.length < want + 1) return;
      const body = pending.subarray(0, want);
      pending = pending.subarray(want + 1);
      want = -1;
      waiting.shift()!(body);
    }
  });
  const read = (oid: string) =>
    new Promise<Buffer>((resolve) => {
      waiting.push(resolve);
      child.stdin.write(`${oid}\n`);
    });
  return {
    name: 'git cat-file --batch (long-lived)',
    read,
    all: async (oids, onBody) => {
      await Promise.all(oids.map((oid) => read(oid).then(onBody)));
    },
    close: () => child.stdin.end(),
  };
}

function ownReader(gitdir: string): Reader {
  const store = new ObjectStore(gitdir);
  return {
    name: 'own pack reader + loose files',
    read: (oid, type = 'blob') => store.read(oid, type),
    all: async (oids, onBody) => {
      for (const oid of oids) onBody(await store.read(oid, 'blob'));
    },
    close: () => {},
  };
}

async function isoReader(gitdir: string): Promise<Reader | undefined> {
  const path = process.env.ISOGIT;
  if (!path) return undefined;
  const { default: git } = (await import(pathToFileURL(path).href)) as { default: { readObject(args: object): Promise<{ object: unknown }> } };
  const cache = {};
  const read = async (oid: string) => Buffer.from((await git.readObject({ fs, gitdir, oid, format: 'content', cache })).object as Uint8Array);
  return {
    name: "isomorphic-git's readObject",
    read,
    all: async (oids, onBody) => {
      for (const oid of oids) onBody(await read(oid));
    },
    close: () => {},
  };
}

// Every blob under a tree (a checkpoint's files), trees read through `read` too.
async function restoreRead(reader: Reader, store: ObjectStore, tree: string): Promise<number> {
  let bytes = 0;
  const walk = async (oid: string): Promise<void> => {
    const entries = parseTree(await reader.read(oid, 'tree'));
    for (const [, entry] of entries) {
      if (entry.mode === TREE_MODE) await walk(entry.oid);
      else bytes += (await reader.read(entry.oid)).length;
    }
  };
  void store;
  await walk(tree);
  return bytes;
}

async function measure(root: string, label: string, rows: Row[]): Promise<void> {
  const gitdir = join(root, '.git');
  const journal = await JournalStore.open(root);
  const run = (await listRunIds(journal))[0]!;
  const files = await listRunStepFiles(journal, run);
  const oids = files.map((f) => f.oid);
  // The last checkpoint's tree: the newest checkpoint ref's commit tree.
  const refs = spawnSync('git', ['--git-dir', gitdir, 'for-each-ref', '--format=%(objectname)', '--sort=-committerdate', '--count=1', 'refs/savepoint/'], { encoding: 'utf8' }).stdout.trim();
  const checkpointTree = refs ? spawnSync('git', ['--git-dir', gitdir, 'rev-parse', `${refs}^{tree}`], { encoding: 'utf8' }).stdout.trim() : spawnSync('git', ['--git-dir', gitdir, 'rev-parse', 'HEAD^{tree}'], { encoding: 'utf8' }).stdout.trim();
  const makers: Array<() => Promise<Reader | undefined>> = [async () => ownReader(gitdir), async () => catFileReader(gitdir), () => isoReader(gitdir)];
  for (const make of makers) {
    const resume: number[] = [];
    const all: number[] = [];
    const restore: number[] = [];
    let name = '';
    for (let round = 0; round < ROUNDS; round++) {
      // A fresh reader each round: a command starts with none (the process, the caches).
      let reader = (await make())!;
      if (!reader) break;
      name = reader.name;
      let t0 = now();
      for (const oid of oids) await reader.read(oid);
      resume.push(now() - t0);
      reader.close();
      reader = (await make())!;
      t0 = now();
      let n = 0;
      await reader.all(oids, () => n++);
      all.push(now() - t0);
      reader.close();
      reader = (await make())!;
      t0 = now();
      await restoreRead(reader, new ObjectStore(gitdir), checkpointTree);
      restore.push(now() - t0);
      reader.close();
    }
    if (!name) continue;
    const p = (s: number[]) => `${percentile(s, 50).toFixed(1)} ms`;
    rows.push({ what: `${label}: ${name}: resume, ${oids.length} entries one at a time`, value: p(resume) });
    rows.push({ what: `${label}: ${name}: log, ${oids.length} entries at once`, value: p(all) });
    rows.push({ what: `${label}: ${name}: restore, the last checkpoint's trees and blobs`, value: p(restore) });
  }
}

async function run(context: BenchContext): Promise<Row[]> {
  const turns = context.quick ? 150 : 1500;
  const kept = process.env.REPO;
  const repo = kept ? { root: kept, remove: () => {} } : createBenchRepo({ ...context, keep: true }, 'readpaths', { fanout: true });
  if (!kept) {
    // A small source tree, so that a checkpoint has files to restore.
    for (let d = 0; d < 10; d++) {
      fs.mkdirSync(join(repo.root, `src${d}`), { recursive: true });
      for (let f = 0; f < 30; f++) fs.writeFileSync(join(repo.root, `src${d}`, `file${f}.js`), `export const v = ${d * 100 + f};\n`.repeat(40));
    }
    spawnSync('git', ['add', '-A'], { cwd: repo.root });
    spawnSync('git', ['commit', '-qm', 'sources'], { cwd: repo.root });
    const script = join(repo.root, '..', `readpaths-script-${process.pid}.json`);
    const write = (i: number) => ({ name: 'write_file', input: { path: `src${i % 10}/file${i % 30}.js`, content: `export const value = ${i};\n`.repeat(1 + (i % 7)) } });
    fs.writeFileSync(script, JSON.stringify({ model: 'scripted', turns: [...Array.from({ length: turns }, (_, i) => ({ text: `turn ${i}`, tools: [write(i)] })), { text: 'done' }] }));
    context.log(`read-paths: recording ${turns} turns in ${repo.root}`);
    const live = spawnSync(process.execPath, [BIN, 'run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'write the modules'], { cwd: repo.root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    if (live.status !== 0) throw new Error(`the recorded run failed: ${live.stderr}`);
  }
  const rows: Row[] = [];
  await measure(repo.root, 'as the run left it', rows);
  spawnSync('git', ['gc', '-q'], { cwd: repo.root });
  await measure(repo.root, 'after git gc', rows);
  if (!context.keep && !kept) fs.rmSync(repo.root, { recursive: true, force: true });
  return rows;
}

await runAlone(import.meta.url, run);
