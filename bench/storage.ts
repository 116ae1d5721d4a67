// The storage benchmark (issue 39): what 1,000 bash turns leave on disk, savepoint's `.git` growth
// beside pi's session file and Claude Code's (its JSONL under ~/.claude/projects; what else it
// writes under ~/.claude is a row of its own), all driven in the same bench run against the local
// fake Anthropic server (as bench/peers.ts drives them: each harness calls its own bash tool, `true`,
// once a turn, then answers). A turn is one model call answering a bash call, then the call's result.
// Claude Code runs with auto-compaction off (the script has no summary to give; no harness compacts
// in these turns).
//
// savepoint's growth is broken down by what holds the bytes: every object's size on disk (`git
// cat-file --batch-all-objects`, `%(objectsize:disk)`: a packed object's compressed or delta
// bytes, a loose one's file) classed by the path `git rev-list --objects agent-journal` first finds
// it at (entry files, run.json, the journal's trees, checkpoint trees and blobs, commits); what packs
// and their indexes take beyond their objects; the reflogs, file by file; and everything else
// savepoint leaves under .git. Sizes are files' apparent sizes (what a copy carries), directories
// not counted, for both harnesses. Registered in bench/run.ts as the group `storage`; alone:
// `npm run build && node --import tsx bench/storage.ts [--quick] [--keep]`. With
// BENCH_STORAGE_BASELINE=<another savepoint checkout, built>, that build runs too (before/after in
// one run).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { ensurePi, PI_VERSION, runHarness } from './peers.js';
import { CLAUDE_VERSION, ensureClaude, prepareClaudeHome } from './claude-code.js';
import { createBenchRepo, createTempDir, now, type BenchContext, type BenchGroup, type BenchRepo, type Row, runAlone } from './lib.js';

const TURNS = 1000;
const QUICK_TURNS = 200;
// Issue 39: savepoint's .git growth at most twice pi's session for the same turns.
const TARGET_RATIO = 2.0;
const BIN = fileURLToPath(new URL('../bin/savepoint.js', import.meta.url));
const BASELINE = process.env.BENCH_STORAGE_BASELINE ? resolve(process.env.BENCH_STORAGE_BASELINE) : undefined;

type Harness = 'savepoint' | 'baseline' | 'pi' | 'claude';
const NAMES: Record<Harness, string> = { savepoint: 'savepoint', baseline: 'baseline', pi: 'pi', claude: 'Claude Code' };

/** Bytes by what holds them, in the order they are printed. */
type Breakdown = Map<string, number>;

function turnsFor(harness: Harness, turns: number): ScriptTurn[] {
  const tool = { name: harness === 'pi' ? 'bash' : harness === 'claude' ? 'Bash' : 'run_bash', input: { command: 'true' } };
  return [...Array.from({ length: turns }, () => ({ tools: [tool] })), { text: `Done: ${turns} tool calls.` }];
}

// Every regular file under `dir`, with its size, by path relative to `dir`.
function filesUnder(dir: string): Map<string, number> {
  const files = new Map<string, number>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.set(relative(dir, path), statSync(path).size);
    }
  };
  if (existsSync(dir)) walk(dir);
  return files;
}

function git(gitDir: string, args: string[]): string {
  const result = spawnSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

// The class of a journal object by the path rev-list first met it at.
function classOf(type: string, path: string | undefined): string {
  if (type === 'commit') return 'objects: journal commits';
  if (path === undefined) return `objects: other ${type}s`;
  if (path === '' && type === 'tree') return 'objects: journal trees (root, runs/, run, steps/, shard)';
  if (/^runs\/[^/]+\/worktree(\/|$)/.test(path)) return type === 'tree' ? 'objects: checkpoint trees' : 'objects: checkpoint blobs';
  if (type === 'blob' && /^runs\/[^/]+\/steps\/.+\.intent\.json$/.test(path)) return 'objects: entry blobs (intents)';
  if (type === 'blob' && /^runs\/[^/]+\/steps\//.test(path)) return 'objects: entry blobs (results)';
  if (type === 'blob' && /^runs\/[^/]+\/run\.json$/.test(path)) return 'objects: run.json blobs';
  if (type === 'tree') return 'objects: journal trees (root, runs/, run, steps/, shard)';
  return `objects: other ${type}s`;
}

// What the files `after` adds to `before` under a .git, by what holds the bytes.
function breakdown(gitDir: string, before: Map<string, number>): Breakdown {
  const after = filesUnder(gitDir);
  const added = (path: string) => (after.get(path) ?? 0) - (before.get(path) ?? 0);
  const parts: Breakdown = new Map();
  const add = (what: string, bytes: number) => parts.set(what, (parts.get(what) ?? 0) + bytes);
  // Objects that were there before the run (the repository's first commit) are not the run's.
  const paths = new Map<string, string>();
  for (const line of git(gitDir, ['rev-list', '--objects', 'refs/heads/agent-journal']).split('\n')) {
    if (!line) continue;
    const space = line.indexOf(' ');
    if (space < 0) paths.set(line, '');
    else paths.set(line.slice(0, space), line.slice(space + 1));
  }
  const mainObjects = new Set(git(gitDir, ['rev-list', '--objects', 'refs/heads/main']).split('\n').map((l) => l.slice(0, 40)));
  let objectBytes = 0;
  for (const line of git(gitDir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize:disk)']).split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (!oid || mainObjects.has(oid)) continue;
    const path = paths.get(oid);
    add(path === undefined ? `objects: unreachable ${type}s` : classOf(type!, path), Number(size));
    objectBytes += Number(size);
  }
  let packFiles = 0;
  let looseFiles = 0;
  for (const path of new Set([...after.keys(), ...before.keys()])) {
    const bytes = added(path);
    if (bytes === 0) continue;
    if (path.startsWith('objects/pack/')) packFiles += bytes;
    else if (/^objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(path)) looseFiles += bytes;
    else if (path.startsWith('logs/')) add(`reflog: ${path.slice('logs/'.length)}`, bytes);
    else if (path.startsWith('refs/')) add('refs', bytes);
    else add(`other: ${path}`, bytes);
  }
  // Packs and loose files carry their objects, plus headers, trailers and the .idx files.
  add('packs and loose files beyond their objects (.idx, headers)', packFiles + looseFiles - objectBytes);
  parts.set('(of which loose object files)', looseFiles);
  return parts;
}

interface RunResult {
  bytes: number;
  parts: Breakdown;
  wallMs: number;
}

async function runOnce(harness: Harness, turns: number, context: BenchContext, piCli: string | undefined, claudeCli: string | undefined): Promise<RunResult> {
  const repo: BenchRepo = createBenchRepo(context, `storage-${harness}`, { fanout: true });
  const agentDir = createTempDir(context, `storage-${harness}-config`);
  const fake = await startFakeAnthropic({ turns: turnsFor(harness, turns) });
  try {
    const gitDir = join(repo.root, '.git');
    const before = filesUnder(gitDir);
    const bin = harness === 'baseline' ? join(BASELINE!, 'bin/savepoint.js') : BIN;
    const started = now();
    const claude = { cli: claudeCli!, home: agentDir.dir, cwd: repo.root };
    if (harness === 'claude') prepareClaudeHome(claude);
    const who = harness === 'pi' ? { piCli: piCli!, agentDir: agentDir.dir } : harness === 'claude' ? { claude } : { bin };
    const { code, stdout, stderr } = await runHarness(who, fake.url, turns, repo.root);
    const wallMs = now() - started;
    if (code !== 0 || !stdout.includes(`Done: ${turns} tool calls.`) || fake.requests.length !== turns + 1) {
      throw new Error(`storage benchmark: ${harness} run: exit ${code}, ${fake.requests.length} requests (expected ${turns + 1})\n--- stdout (tail):\n${stdout.slice(-1500)}\n--- stderr:\n${stderr.slice(-1500)}`);
    }
    if (harness === 'claude') {
      const all = filesUnder(join(agentDir.dir, '.claude'));
      const sessions = [...all].filter(([path]) => path.startsWith('projects/') && path.endsWith('.jsonl'));
      const bytes = sessions.reduce((total, [, b]) => total + b, 0);
      const rest = [...all.values()].reduce((total, b) => total + b, 0) - bytes;
      return { bytes, parts: new Map([[`session files (${sessions.length})`, bytes], ['(everything else under ~/.claude: settings, shell snapshots, ...)', rest]]), wallMs };
    }
    if (harness === 'pi') {
      const files = filesUnder(join(agentDir.dir, 'sessions'));
      return { bytes: [...files.values()].reduce((a, b) => a + b, 0), parts: new Map([[`session files (${files.size})`, [...files.values()].reduce((a, b) => a + b, 0)]]), wallMs };
    }
    const parts = breakdown(gitDir, before);
    const bytes = [...parts].filter(([what]) => !what.startsWith('(')).reduce((total, [, b]) => total + b, 0);
    // The journal must still be whole git: fsck'd strictly, every entry on the branch.
    git(gitDir, ['fsck', '--strict', '--no-progress']);
    return { bytes, parts, wallMs };
  } finally {
    await fake.close();
    repo.remove();
    agentDir.remove();
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

async function run(context: BenchContext): Promise<Row[]> {
  const pi = ensurePi(context.log);
  const piCli = 'cli' in pi ? pi.cli : undefined;
  const claude = ensureClaude(context.log);
  const claudeCli = 'cli' in claude ? claude.cli : undefined;
  const turns = context.quick ? QUICK_TURNS : TURNS;
  const per1000 = (bytes: number) => (bytes * 1000) / turns;
  const harnesses: Harness[] = [...(BASELINE ? (['baseline'] as const) : []), 'savepoint', ...(piCli ? (['pi'] as const) : []), ...(claudeCli ? (['claude'] as const) : [])];
  const results = new Map<Harness, RunResult>();
  // Claude Code's failure to run skips its rows with the reason; the others' fail the group.
  let claudeFailed: string | undefined;
  for (const harness of harnesses) {
    context.log(`${NAMES[harness]}: ${turns} bash turns`);
    try {
      results.set(harness, await runOnce(harness, turns, context, piCli, claudeCli));
    } catch (error) {
      if (harness !== 'claude') throw error;
      claudeFailed = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      context.log(`Claude Code: skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const rows: Row[] = [
    { what: 'pi', value: piCli ? `${PI_VERSION}, driven against the same fake server` : `skipped: ${(pi as { skipped: string }).skipped}` },
    { what: 'Claude Code', value: claudeFailed ? `skipped: ${claudeFailed}` : claudeCli ? `${CLAUDE_VERSION}, driven against the same fake server` : `skipped: ${(claude as { skipped: string }).skipped}` },
  ];
  for (const harness of harnesses) {
    const result = results.get(harness);
    if (!result) continue;
    const where = harness === 'pi' ? 'session folder' : harness === 'claude' ? 'session file (~/.claude/projects)' : '.git growth';
    rows.push({ what: `${NAMES[harness]}: ${where} per 1,000 bash turns (${turns} run)`, n: turns, value: `${(per1000(result.bytes) / 1024 / 1024).toFixed(3)} MB`, total: result.wallMs });
    if (harness === 'pi') continue;
    if (harness === 'claude') {
      for (const [what, bytes] of result.parts) if (what.startsWith('(')) rows.push({ what: `  ${NAMES.claude}: ${what}, per 1,000 turns`, value: kb(per1000(bytes)) });
      continue;
    }
    for (const [what, bytes] of result.parts) if (bytes !== 0) rows.push({ what: `  ${harness}: ${what}, per 1,000 turns`, value: kb(per1000(bytes)) });
  }
  if (piCli) {
    const theirs = results.get('pi')!.bytes;
    for (const harness of harnesses.filter((h) => h !== 'pi' && h !== 'claude')) {
      const ratio = results.get(harness)!.bytes / theirs;
      rows.push({ what: `${harness} .git growth / pi session, same turns`, value: `${ratio.toFixed(2)}x`, ...(harness === 'savepoint' && !context.quick ? { target: `≤ ${TARGET_RATIO.toFixed(1)}x`, ok: ratio <= TARGET_RATIO } : {}) });
    }
  }
  const theirs = results.get('claude')?.bytes;
  if (theirs !== undefined) {
    for (const harness of harnesses.filter((h) => h !== 'pi' && h !== 'claude')) {
      rows.push({ what: `${harness} .git growth / Claude Code's session file, same turns`, value: `${(results.get(harness)!.bytes / theirs).toFixed(2)}x` });
    }
  }
  return rows;
}

export const storageGroup: BenchGroup = {
  name: 'storage',
  description: `.git growth per 1,000 bash turns, broken down, beside pi ${PI_VERSION}'s and Claude Code ${CLAUDE_VERSION}'s sessions for the same turns`,
  run,
};

// Run alone: `node --import tsx bench/storage.ts [--quick] [--keep]`.
await runAlone(import.meta.url, run);
