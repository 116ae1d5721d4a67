// The deltas git leaves out of a journal's pack (src/git/history-deltas.ts): a run's end stores
// each append's commit and the small trees on its path as deltas of their neighbours. Judged by
// git: fsck --strict, verify-pack, `git log -p` reading every entry as before, gc keeping the
// deltas, and the pack smaller than git's own `repack -a -d -f` of the same objects.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { addHistoryDeltas, makeDelta } from '../../src/git/history-deltas.js';
import { applyDelta } from '../../src/git/pack-format.js';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

const stepPath = (step: number, kind: string, intent = false) => `runs/r/steps/${String(Math.floor(step / 100)).padStart(3, '0')}/${String(step).padStart(6, '0')}-${kind}${intent ? '.intent' : ''}.json`;
const entry = (step: number, kind: string) => `${JSON.stringify({ format: 'savepoint/entry@1', run: 'r', step, kind, startedAt: new Date(1e12 + step * 1000).toISOString() }, null, 2)}\n`;

// Bytes of the pack and index files under `root`, how many commits are stored as deltas, the longest chain.
async function packStats(root: string): Promise<{ bytes: number; commitDeltas: number; commits: number; maxChain: number }> {
  const dir = join(root, '.git/objects/pack');
  const stats = { bytes: 0, commitDeltas: 0, commits: 0, maxChain: 0 };
  for (const name of readdirSync(dir)) {
    if (/\.(pack|idx)$/.test(name)) stats.bytes += statSync(join(dir, name)).size;
    if (!name.endsWith('.idx')) continue;
    const out = await gitOut(root, ['verify-pack', '-v', join(dir, name)]);
    for (const line of out.split('\n')) {
      const fields = line.split(/\s+/);
      if (fields[1] !== 'commit') continue;
      stats.commits++;
      if (fields.length > 5) stats.commitDeltas++;
    }
    for (const chain of out.matchAll(/^chain length = (\d+):/gm)) stats.maxChain = Math.max(stats.maxChain, Number(chain[1]));
  }
  return stats;
}

describe('the deltas git leaves out of a journal', () => {
  it("stores commits and path trees as deltas at a run's end: smaller than git's repack, read whole by git and by savepoint, kept by git gc", async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    const written = new Map<string, string>();
    for (let step = 1; step <= 150; step++) {
      const kind = step % 3 === 1 ? 'model' : 'run_bash';
      const path = stepPath(step, kind, step % 3 === 2);
      written.set(path, entry(step, kind));
      await store.append([{ path, content: written.get(path)! }], `r #${step} ${kind}`);
    }
    await store.objects.rollup.settle();
    assert.equal((await store.objects.rollup.tidy())?.deltified, true);
    await assertFsckClean(repo.root);
    const ours = await packStats(repo.root);
    assert.ok(ours.commitDeltas >= ours.commits * 0.9, `commits stored as deltas: ${ours.commitDeltas} of ${ours.commits}`);
    assert.ok(ours.maxChain <= 100, `delta chains: ${ours.maxChain}`);

    // git's own repack of the very same objects stores every commit and small tree whole.
    const repacked = join(scratch.dir(), 'repacked');
    cpSync(repo.root, repacked, { recursive: true });
    await gitOut(repacked, ['repack', '-q', '-a', '-d', '-f']);
    const gits = await packStats(repacked);
    assert.equal(gits.commitDeltas, 0);
    assert.ok(ours.bytes < gits.bytes * 0.95, `ours ${ours.bytes} bytes, git's ${gits.bytes}`);

    // What `git log -p agent-journal` shows is the same, entry for entry.
    const log = await gitOut(repo.root, ['log', '-p', '--format=%H %s', 'agent-journal']);
    assert.equal(log, await gitOut(repacked, ['log', '-p', '--format=%H %s', 'agent-journal']));
    for (const content of written.values()) assert.ok(log.includes(content.split('\n').map((line) => `+${line}`).slice(0, -1).join('\n')), content);

    // savepoint's own reader reads every entry at the tip and every commit on the way.
    const fresh = await JournalStore.open(repo.root);
    for (const [path, content] of written) assert.equal((await fresh.fileAt(path))?.toString(), content);
    assert.equal(await fresh.isAncestor((await gitOut(repo.root, ['rev-list', '--max-parents=0', 'agent-journal'])).trim(), fresh.tip!, 1000), true);

    // git gc reuses the pack's deltas: the journal stays as small.
    const collected = join(scratch.dir(), 'collected');
    cpSync(repo.root, collected, { recursive: true });
    await gitOut(collected, ['gc', '-q', '--prune=now']);
    await assertFsckClean(collected);
    assert.ok((await packStats(collected)).bytes < gits.bytes * 0.95, 'git gc kept the deltas');
  });

  it("takes a journal as today's build left it (git's pack, a reflog line per append): appends, rolls it up with deltas, keeps the old lines", async () => {
    const repo = await scratch.repo();
    const written = new Map<string, string>();
    const appendSteps = async (store: JournalStore, from: number, to: number) => {
      for (let step = from; step <= to; step++) {
        const path = stepPath(step, 'run_bash');
        written.set(path, entry(step, 'run_bash'));
        await store.append([{ path, content: written.get(path)! }], `r #${step} run_bash`);
      }
    };
    await appendSteps(await JournalStore.open(repo.root), 1, 60);
    // What the build before this one left: every object in git's own pack, a reflog line per append.
    await gitOut(repo.root, ['repack', '-q', '-a', '-d', '-f']);
    const commits = (await gitOut(repo.root, ['rev-list', '--reverse', 'agent-journal'])).split('\n');
    const log = join(repo.root, '.git/logs/refs/heads/agent-journal');
    writeFileSync(log, commits.map((oid, i) => `${i ? commits[i - 1] : '0'.repeat(40)} ${oid} Savepoint Test <test@savepoint.invalid> ${1e9 + i} +0000\tsavepoint: r #${i + 1} run_bash\n`).join(''));

    const resumed = await JournalStore.open(repo.root);
    await appendSteps(resumed, 61, 120);
    await resumed.objects.rollup.settle();
    assert.equal((await resumed.objects.rollup.tidy())?.deltified, true);
    await assertFsckClean(repo.root);
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 60 + 1, 'the old lines, then the resumed store\'s first append');
    assert.match(lines[60]!, new RegExp(`^${commits[59]} [0-9a-f]{40} .*\tsavepoint: r #61 run_bash$`));
    const stats = await packStats(repo.root);
    assert.ok(stats.commitDeltas >= stats.commits * 0.9, `commits stored as deltas: ${stats.commitDeltas} of ${stats.commits}`);
    const fresh = await JournalStore.open(repo.root);
    for (const [path, content] of written) assert.equal((await fresh.fileAt(path))?.toString(), content);
  });

  it('makes deltas git applies back byte for byte, and leaves alone what is not a pack', async () => {
    const cases: Array<[Buffer, Buffer]> = [
      [Buffer.alloc(0), Buffer.from('all new')],
      [Buffer.from('same bytes, same bytes'), Buffer.from('same bytes, same bytes')],
      [Buffer.from(`tree ${'a'.repeat(40)}\nparent ${'b'.repeat(40)}\n\nr #1`), Buffer.from(`tree ${'c'.repeat(40)}\nparent ${'d'.repeat(40)}\n\nr #2`)],
      [randomBytes(300), randomBytes(300)],
      [Buffer.alloc(70_000, 7), Buffer.concat([Buffer.alloc(70_000, 7), Buffer.from('tail')])], // copies longer than one instruction holds
    ];
    const base = randomBytes(2000);
    cases.push([base, Buffer.concat([base.subarray(500, 1500), randomBytes(20), base.subarray(0, 400)])]);
    for (const [from, to] of cases) assert.deepEqual(applyDelta(makeDelta(from, to), from), to);
    assert.equal(await addHistoryDeltas(Buffer.from('not a pack at all, not at all'), Buffer.alloc(2000)), undefined);
  });
});
