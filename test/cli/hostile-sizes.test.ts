// Sizes from a fetched journal are checked before anything is read whole: someone with push access
// puts a 200 MB file of zeros (a few hundred KB once compressed) into a run's last checkpoint, and
// an entry holding a 340 MB JSON string into another run, and the person who clones it and resumes
// or looks at those runs gets a clear error naming the run, step and path, with nothing written and
// the process's peak memory (GNU time's maximum resident set) far below what reading either whole
// would take: the sizes were read from the objects' headers, and the objects never.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { forgeJournalBlob, forgeLastCheckpoint, mktree, projectAt, streamBlob, type ForgedEntry } from '../helpers/hostile-tree.js';
import { runCli, startCli, waitUntil, type CliResult } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const MB = 1024 * 1024;
const ZEROS_BYTES = 200 * MB;
const ENTRY_BYTES = 340 * MB;

interface Forged {
  dir: string;
  clone: string;
  /** An unfinished run whose last checkpoint holds zeros.bin. */
  restored: string;
  /** A finished run whose step 2 entry holds a 340 MB string. */
  huge: string;
}

// One repository with both runs, forged once and cloned once (the big objects cost seconds to
// make and copy on a shared machine).
async function forged(): Promise<Forged> {
  const { dir, root } = await projectAt(() => scratch.dir('savepoint-sizes-'));
  const finished = join(dir, 'finished.json');
  writeFileSync(finished, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'log.txt', content: 'log\n' } }] }, { text: 'done' }] }));
  const done = await runCli(['run', '--yes', '--model', `script:${finished}`, 'keep the log'], { cwd: root });
  assert.equal(done.code, 0, done.stderr);
  const huge = /run (\S+)/.exec(done.stdout)![1]!;

  const killed = join(dir, 'killed.json');
  writeFileSync(killed, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'slow', delayMs: 60_000 }, { text: 'done' }] }));
  const cli = startCli(['run', '--yes', '--model', `script:${killed}`, 'write the notes'], { cwd: root });
  await waitUntil(() => /#2 .*write_file notes\.txt/.test(cli.stdout), 'the write_file step', { child: cli });
  cli.kill();
  await cli.result;
  const restored = /run (\S+)/.exec(cli.stdout)![1]!;

  const entryPath = (await gitOut(root, ['ls-tree', '-r', '--name-only', 'agent-journal', `runs/${huge}/steps/`])).split('\n').find((f) => f.endsWith('000002-write_file.json'))!;
  const entry = await streamBlob(root, `{ printf '{"format":1,"step":2,"kind":"write_file","result":"'; head -c ${ENTRY_BYTES} /dev/zero | tr '\\0' a; printf '"}\\n'; }`);
  await forgeJournalBlob(root, entryPath, entry);

  const zeros = await streamBlob(root, `head -c ${ZEROS_BYTES} /dev/zero`);
  const checkpoint = await gitOut(root, ['rev-parse', `agent-journal:runs/${restored}/worktree`]);
  const files: ForgedEntry[] = (await gitOut(root, ['ls-tree', checkpoint])).split('\n').map((line) => {
    const [meta, name] = line.split('\t') as [string, string];
    const [mode, , oid] = meta.split(' ') as [string, string, string];
    return { mode, name, oid };
  });
  await forgeLastCheckpoint(root, restored, await mktree(root, [...files, { mode: '100644', name: 'zeros.bin', oid: zeros }]));

  // The remote gets main and agent-journal as a push would leave them: git keeps a push of fewer
  // than 100 objects (receive.unpackLimit) as loose objects, so the forged blobs arrive loose either
  // way. A local bare clone hard-links them instead of deflating 540 MB into a pack and inflating it
  // again on the receiving side (about 20 s of CPU for the push alone).
  const remote = join(dir, 'remote.git');
  await gitOut(dir, ['clone', '-q', '--bare', root, remote]);
  const clone = join(dir, 'b');
  await gitOut(dir, ['clone', '-q', '-b', 'main', remote, clone]);
  return { dir, clone, restored, huge };
}

// The CLI run under GNU time: its result with the time line taken off stderr, and its peak RSS in MB.
async function measured(args: string[], cwd: string): Promise<CliResult & { peakMb: number }> {
  const result = await runCli(args, { cwd, under: ['/usr/bin/time', '-f', 'peak-rss-kb=%M'], timeoutMs: 120_000 });
  const peak = /peak-rss-kb=(\d+)\s*$/.exec(result.stderr);
  assert.ok(peak, `GNU time reported the peak memory: ${result.stderr}`);
  return { ...result, stderr: result.stderr.slice(0, peak.index), peakMb: Number(peak[1]) / 1024 };
}

// A clear error: exit 1 and the message on stderr, or (`log`, which shows a damaged run as corrupt)
// exit 0 and the message in its output; never "unexpected error" or a stack trace.
function assertClear(result: CliResult, pattern: RegExp, context: string, shownAsCorrupt = false): string {
  assert.equal(result.code, shownAsCorrupt ? 0 : 1, `${context}: ${result.stdout}\n${result.stderr}`);
  assert.doesNotMatch(result.stdout + result.stderr, /unexpected error|\n\s+at /, context);
  const message = (shownAsCorrupt ? result.stdout : result.stderr).trim().replace(/\s+/g, ' ');
  assert.match(message, pattern, context);
  return message;
}

describe('sizes from a fetched journal are checked before anything is read whole', { concurrency: true }, () => {
  let f: Forged;
  before(async () => {
    f = await forged();
  });

  test('a checkpoint file of 200 MB of zeros: resume on the clone refuses it from its size, writes nothing and never holds it', async () => {
    const result = await measured(['resume', '--yes'], f.clone);
    const message = assertClear(result, /holds "zeros\.bin", which is 200\.0 MB \(209715200 bytes\), more than the 10\.0 MB a checkpoint records of a file, so it was not read/, 'resume');
    assert.match(message, /nothing was written/);
    assert.ok(!existsSync(join(f.clone, 'zeros.bin')), 'the file is not written');
    assert.ok(!existsSync(join(f.clone, 'notes.txt')), 'nor any other file of the checkpoint');
    assert.ok(result.peakMb < ZEROS_BYTES / MB / 2, `peak memory ${result.peakMb.toFixed(0)} MB: the file was never read`);
  });

  test('an entry holding a 340 MB string: log, show and resume name the run, step and path, and never read it', async () => {
    const path = new RegExp(`runs/${f.huge}/steps/000/000002-write_file\\.json \\(step 2\\) is corrupt: it is 340\\.0 MB \\(\\d+ bytes\\), more than the 320\\.0 MB savepoint reads of one`);
    for (const args of [['log', f.huge], ['show', f.huge, '2'], ['resume', '--yes', f.huge]]) {
      const result = await measured(args, f.clone);
      assertClear(result, path, args.join(' '), args[0] === 'log');
      assert.ok(result.peakMb < ENTRY_BYTES / MB / 2, `${args.join(' ')}: peak memory ${result.peakMb.toFixed(0)} MB: the entry was never read`);
    }
  });
});
