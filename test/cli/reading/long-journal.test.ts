// A run long enough that `log` reads hundreds of entry files and lists its shards of 100 steps, written by the real CLI with a
// scripted model. What log says of every step is held to the entries as `git archive` hands them
// over (git as the judge, without savepoint's reader); a forged entry in the middle of the run is
// still named; and the output of the plain timeline, now written in chunks, is every step's line.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { gitOut } from '../../helpers/git.js';
import { forgeJournalJson, projectAt } from '../../helpers/hostile-tree.js';
import { runCli } from '../../helpers/cli.js';
import { useScratch } from '../../helpers/scratch.js';

const scratch = useScratch();
const TURNS = 130; // 261 steps, 130 of them with an intent too: 391 entry files, in 3 shards

interface TimelineJson {
  run: { id: string; steps: number };
  steps: Array<{ step: number; kind: string; description: string; summary: string | null; durationMs: number | null; checkpoint: string | null; state: string }>;
}

// Every journal file of the run as `git archive` extracts it, parsed: the judge's copy.
function archivedEntries(root: string, run: string, into: string): Map<number, Record<string, Record<string, unknown>>> {
  mkdirSync(into, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', 'agent-journal', `runs/${run}/steps`], { cwd: root, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', into], { input: tar });
  const byStep = new Map<number, Record<string, Record<string, unknown>>>();
  const stepsDir = join(into, 'runs', run, 'steps');
  for (const shard of readdirSync(stepsDir)) {
    for (const name of readdirSync(join(stepsDir, shard))) {
      const entry = JSON.parse(readFileSync(join(stepsDir, shard, name), 'utf8')) as Record<string, unknown>;
      const phases = byStep.get(entry.step as number) ?? {};
      phases[entry.phase as string] = entry;
      byStep.set(entry.step as number, phases);
    }
  }
  return byStep;
}

describe('log over a long run', { concurrency: true }, () => {
  let dir = '';
  let root = '';
  let run = '';

  before(async () => {
    ({ dir, root } = await projectAt(() => scratch.dir('savepoint-long-log-')));
    const write = (i: number) => ({ name: 'write_file', input: { path: `src/m${i % 7}.js`, content: `export const v = ${i};\n` } });
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [...Array.from({ length: TURNS }, (_, i) => ({ text: `turn ${i}`, tools: [write(i)] })), { text: 'done' }] }));
    const result = await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'write the modules'], { cwd: root, timeoutMs: 300_000 });
    assert.equal(result.code, 0, result.stderr);
    run = /run (\S+)/.exec(result.stdout)![1]!;
  });

  it('says of every step what its entries in git say', async () => {
    const archived = archivedEntries(root, run, join(dir, 'archive'));
    const files = [...archived.values()].reduce((n, phases) => n + Object.keys(phases).length, 0);
    assert.ok(files >= 200, `${files} entry files`);
    const result = await runCli(['log', run, '--json'], { cwd: root });
    assert.equal(result.code, 0, result.stderr);
    const timeline = JSON.parse(result.stdout) as TimelineJson;
    assert.equal(timeline.steps.length, 2 * TURNS + 1);
    assert.deepEqual(timeline.steps.map((s) => s.step), [...archived.keys()].sort((a, b) => a - b));
    for (const s of timeline.steps) {
      const { intent, result: done } = archived.get(s.step)!;
      const entry = done ?? intent!;
      assert.equal(s.state, done ? 'finished' : 'in-flight', `#${s.step}`);
      assert.equal(s.kind, entry.kind, `#${s.step}`);
      assert.equal(s.description, entry.description, `#${s.step}`);
      assert.equal(s.summary, done?.summary ?? null, `#${s.step}`);
      assert.equal(s.durationMs, done?.durationMs ?? null, `#${s.step}`);
      assert.equal(s.checkpoint, done?.checkpoint ?? null, `#${s.step}`);
    }
  });

  it('prints one line per step and the totals, the run found with no id given', async () => {
    const result = await runCli(['log'], { cwd: root, env: { COLUMNS: '120' } });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n');
    const steps = lines.filter((line) => /^\s+#\d+\s/.test(line)).map((line) => Number(/#(\d+)/.exec(line)![1]));
    assert.deepEqual(steps, Array.from({ length: 2 * TURNS + 1 }, (_, i) => i + 1));
    assert.ok(lines.some((line) => line.startsWith('Totals') && line.includes(`${2 * TURNS + 1} steps`)), result.stdout.slice(-600));
    assert.ok(result.stdout.endsWith('with its diff.\n'), 'the last chunk was written');
  });

  it('names a forged entry in the middle of the run, as for a short one', async () => {
    const { root: copy } = await projectAt(() => scratch.dir('savepoint-long-forged-'));
    await gitOut(copy, ['fetch', '-q', root, 'agent-journal:agent-journal']);
    await forgeJournalJson(copy, `runs/${run}/steps/001/000150-write_file.json`, (entry) => {
      entry.durationMs = 'slow';
    });
    const result = await runCli(['log', run], { cwd: copy });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /corrupt/);
    assert.match(result.stdout, /000150-write_file\.json \(step 150\) is corrupt: its duration is not a number/);
    const json = await runCli(['show', run, '150'], { cwd: copy });
    assert.equal(json.code, 1, json.stdout);
    assert.match(json.stderr, /000150-write_file\.json \(step 150\) is corrupt/);
  });
});
