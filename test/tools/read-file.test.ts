import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createReadFileTool } from '../../src/tools/read-file.js';
import { truncateForModel } from '../../src/tools/truncate.js';
import { tsChild } from '../helpers/library.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

describe('read_file', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let outside: string;
  let tool: ReturnType<typeof createReadFileTool>;
  before(async () => {
    repo = await scratch.repo(
      {
        'src/app.js': 'const a = 1;\nconst b = 2;\n\nexport { a, b };\n',
        'long.txt': Array.from({ length: 2500 }, (_, i) => `row ${i + 1}`).join('\n'),
        'empty.txt': '',
      },
      { commit: false },
    );
    writeFileSync(join(repo.root, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    outside = scratch.dir('savepoint-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    symlinkSync(join(outside, 'secret.txt'), join(repo.root, 'secret-link'));
    symlinkSync(outside, join(repo.root, 'outside-dir'));
    tool = createReadFileTool(repo.root);
  });

  it('returns the text with right-aligned line numbers and a tab, like cat -n', async () => {
    const result = await tool.execute({ path: 'src/app.js' });
    assert.equal(result.isError, false);
    assert.equal(result.output, '     1\tconst a = 1;\n     2\tconst b = 2;\n     3\t\n     4\texport { a, b };');
    assert.equal(result.summary, '4 lines');
  });

  it('reads from a 1-based offset for a limited number of lines', async () => {
    const result = await tool.execute({ path: 'src/app.js', offset: 2, limit: 2 });
    assert.equal(result.output, '     2\tconst b = 2;\n     3\t\n\n[lines 2-3 of 4; read on with offset 4]');
    assert.equal(result.summary, 'lines 2-3 of 4');
  });

  it('shows the first 2000 lines of a long file and says how to read on', async () => {
    const result = await tool.execute({ path: 'long.txt' });
    const lines = result.output.split('\n');
    assert.equal(lines[0], '     1\trow 1');
    assert.equal(lines[1999], '  2000\trow 2000');
    assert.equal(lines.at(-1), '[lines 1-2000 of 2500; read on with offset 2001]');
    const rest = await tool.execute({ path: 'long.txt', offset: 2001 });
    assert.deepEqual(rest.output.split('\n').slice(-3), ['  2500\trow 2500', '', '[lines 2001-2500 of 2500]']);
  });

  it('ends a window at the 50 KB a result shows the model whole, and says where to read on', async () => {
    writeFileSync(join(repo.root, 'wide.txt'), Array.from({ length: 2000 }, (_, i) => `${i + 1} ${'w'.repeat(99)}`).join('\n'));
    const result = await tool.execute({ path: 'wide.txt' });
    const footer = /\n\n\[lines 1-(\d+) of 2000; a read returns at most 50\.0 KB of the file \(204\.0 KB in all\), and this step records no more than that; read on with offset (\d+)\]$/.exec(result.output);
    assert.ok(footer, result.output.slice(-300));
    const shown = Number(footer[1]);
    assert.equal(Number(footer[2]), shown + 1);
    assert.ok(shown > 400 && shown < 2000, `${shown} lines`);
    assert.deepEqual(result.output.split('\n').slice(0, shown), Array.from({ length: shown }, (_, i) => `${String(i + 1).padStart(6)}\t${i + 1} ${'w'.repeat(99)}`));
    assert.ok(Buffer.byteLength(result.output) <= 50 * 1024);
    assert.equal(truncateForModel(result.output), result.output, 'the model gets the read whole');
    const next = await tool.execute({ path: 'wide.txt', offset: shown + 1, limit: 1 });
    assert.equal(next.output, `${String(shown + 1).padStart(6)}\t${shown + 1} ${'w'.repeat(99)}\n\n[lines ${shown + 1}-${shown + 1} of 2000; read on with offset ${shown + 2}]`);
  });

  it('shows the start of a line longer than a whole read, alone', async () => {
    writeFileSync(join(repo.root, 'minified.js'), `${'m'.repeat(200_000)}\nsecond\n`);
    const result = await tool.execute({ path: 'minified.js' });
    const [first, ...rest] = result.output.split('\n');
    assert.match(first!, /^     1\tm+$/);
    assert.ok(Buffer.byteLength(result.output) <= 50 * 1024);
    assert.deepEqual(rest, ['', '[lines 1-1 of 2; line 1 is 195.3 KB long: only its start is shown (a read returns at most 50.0 KB; run_bash with cut or head -c shows more of it); read on with offset 2]']);
    assert.equal((await tool.execute({ path: 'minified.js', offset: 2 })).output, '     2\tsecond\n\n[lines 2-2 of 2]');
    // Bytes that are not UTF-8 are shown as U+FFFD, three bytes each: the cut is made after that.
    writeFileSync(join(repo.root, 'latin1.txt'), Buffer.alloc(100_000, 0xe9));
    const latin1 = await tool.execute({ path: 'latin1.txt' });
    assert.match(latin1.output, /^     1\t\uFFFD+\n\n\[lines 1-1 of 1; line 1 is 97\.7 KB long: only its start is shown/);
    assert.ok(Buffer.byteLength(latin1.output) <= 50 * 1024, `${Buffer.byteLength(latin1.output)} bytes`);
  });

  it('keeps a line whole, characters included, where it crosses from one block read to the next (1 MB)', async () => {
    // Line 2 starts 2 bytes before the 1 MB mark, so its "é" is split between two reads.
    writeFileSync(join(repo.root, 'blocks.txt'), `${'a'.repeat(1024 * 1024 - 3)}\nxé日\nend`);
    const result = await tool.execute({ path: 'blocks.txt', offset: 2, limit: 1 });
    assert.equal(result.output, '     2\txé日\n\n[lines 2-2 of 3; read on with offset 3]');
    assert.equal((await tool.execute({ path: 'blocks.txt', offset: 3 })).output, '     3\tend\n\n[lines 3-3 of 3]');
  });

  it('says so for an empty file and for an offset past the end', async () => {
    assert.equal((await tool.execute({ path: 'empty.txt' })).output, '(empty.txt is empty)');
    const past = await tool.execute({ path: 'src/app.js', offset: 10 });
    assert.equal(past.isError, false);
    assert.match(past.output, /has 4 lines; nothing to show from line 10/);
  });

  it('accepts an absolute path inside the repository', async () => {
    const result = await tool.execute({ path: join(repo.root, 'src/app.js') });
    assert.equal(result.isError, false);
  });

  it('answers a missing file, a directory or a binary file with an error result', async () => {
    const missing = await tool.execute({ path: 'nope.txt' });
    assert.equal(missing.isError, true);
    assert.equal(missing.output, 'No such file or directory: nope.txt');
    const dir = await tool.execute({ path: 'src' });
    assert.equal(dir.isError, true);
    assert.match(dir.output, /Is a directory.*list_files/);
    const binary = await tool.execute({ path: 'image.bin' });
    assert.equal(binary.isError, true);
    assert.match(binary.output, /binary file/);
  });

  it('answers a FIFO with an error result at once instead of waiting for a writer', async () => {
    execFileSync('mkfifo', [join(repo.root, 'pipe')]);
    // No writer ever opens it: reading it would never return, so an answer at all is the proof.
    const result = await tool.execute({ path: 'pipe' });
    assert.equal(result.isError, true);
    assert.equal(result.output, 'pipe is a FIFO (named pipe), not a regular file; read_file reads regular files only.');
  });

  it('answers a device node with an error result, never reading it', { skip: process.getuid?.() !== 0 && 'mknod needs root' }, async () => {
    // /dev/zero's numbers: read, it would never end.
    execFileSync('mknod', [join(repo.root, 'zero'), 'c', '1', '5']);
    const result = await tool.execute({ path: 'zero' });
    assert.equal(result.isError, true);
    assert.match(result.output, /^zero is a character device, not a regular file/);
  });

  it('refuses paths outside the repository and inside .git', async () => {
    for (const path of ['../x', '/etc/passwd', 'secret-link', 'outside-dir/secret.txt', '.git/config']) {
      const result = await tool.execute({ path });
      assert.equal(result.isError, true, path);
      assert.match(result.output, /outside the repository|off limits/, path);
      assert.doesNotMatch(result.output, /secret\n/);
    }
  });

  it('rejects bad input without throwing', async () => {
    for (const input of [{}, { path: 42 }, { path: 'src/app.js', offset: 0 }, { path: 'src/app.js', limit: 1.5 }, { path: 'a', extra: 1 }, null, 'src/app.js']) {
      const result = await tool.execute(input as never);
      assert.equal(result.isError, true, JSON.stringify(input));
      assert.match(result.output, /input/i);
      assert.equal(result.summary, 'error: invalid input');
    }
    assert.match((await tool.execute({} as never)).output, /"path" is required/);
  });

  it('is a repeat-safe read that needs no approval and changes nothing', () => {
    const input = { path: 'src/app.js' };
    assert.equal(tool.isRepeatSafe(input), true);
    assert.equal(tool.needsApproval(input), false);
    assert.equal(tool.mayChangeFiles(input), false);
    assert.equal(tool.describe(input), 'read_file src/app.js');
  });
});

// A log of over 512 MB: loaded whole, its text would pass the longest string V8 can make (the read
// failed with "Cannot create a string longer than 0x1fffffe8 characters"; 400 MB took 1.2 GB).
describe('read_file on a file of 520 MB', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let tool: ReturnType<typeof createReadFileTool>;
  // 16,384 lines of 64 bytes (`00042 xxx…`) make a 1 MB block; 520 blocks, then three more lines, the last without a newline.
  const BLOCK_LINES = 16_384;
  const BLOCKS = 520;
  const TOTAL = BLOCK_LINES * BLOCKS + 3;
  const blockLine = (number: number) => `${String((number - 1) % BLOCK_LINES).padStart(5, '0')} ${'x'.repeat(57)}`;
  before(async () => {
    repo = await scratch.repo({ '.gitignore': 'big.log\n' });
    const block = Buffer.from(Array.from({ length: BLOCK_LINES }, (_, i) => `${blockLine(i + 1)}\n`).join(''));
    const out = createWriteStream(join(repo.root, 'big.log'));
    for (let i = 0; i < BLOCKS; i++) if (!out.write(block)) await once(out, 'drain');
    out.end('the end 1\nthe end 2\nthe end 3');
    await once(out, 'finish');
    tool = createReadFileTool(repo.root);
  });
  after(() => rmSync(join(repo.root, 'big.log'), { force: true }));

  it('reads the lines asked for near its end, numbered, with the count of all its lines', async () => {
    const result = await tool.execute({ path: 'big.log', offset: TOTAL - 2, limit: 2 });
    assert.equal(result.isError, false, result.output);
    assert.equal(result.output, `${TOTAL - 2}\tthe end 1\n${TOTAL - 1}\tthe end 2\n\n[lines ${TOTAL - 2}-${TOTAL - 1} of ${TOTAL}; read on with offset ${TOTAL}]`);
    assert.equal(result.summary, `lines ${TOTAL - 2}-${TOTAL - 1} of ${TOTAL}`);
    const middle = BLOCK_LINES * 300 + 5;
    assert.equal((await tool.execute({ path: 'big.log', offset: middle, limit: 1 })).output, `${middle}\t${blockLine(middle)}\n\n[lines ${middle}-${middle} of ${TOTAL}; read on with offset ${middle + 1}]`);
  });

  it('without offset or limit, shows its head up to what a result shows and says how it goes on', async () => {
    const result = await tool.execute({ path: 'big.log' });
    const footer = new RegExp(`\n\n\\[lines 1-(\\d+) of ${TOTAL}; a read returns at most 50\\.0 KB of the file \\(520\\.0 MB in all\\), and this step records no more than that; read on with offset (\\d+)\\]$`).exec(result.output);
    assert.ok(footer, result.output.slice(-300));
    const shown = Number(footer[1]);
    assert.equal(Number(footer[2]), shown + 1);
    assert.deepEqual(result.output.split('\n').slice(0, shown), Array.from({ length: shown }, (_, i) => `${String(i + 1).padStart(6)}\t${blockLine(i + 1)}`));
    assert.equal(truncateForModel(result.output), result.output);
  });

  it('reads it in a process whose heap is 96 MB, well under the file', async () => {
    const script = join(scratch.dir('savepoint-read-'), 'read.mjs');
    // The compiled module when the tests run compiled (plain node starts it), else the source through tsx.
    const { execArgv, file: source } = tsChild(fileURLToPath(new URL('../../src/tools/read-file.ts', import.meta.url)));
    writeFileSync(script, `import { createReadFileTool } from ${JSON.stringify(source)};
const result = await createReadFileTool(${JSON.stringify(repo.root)}).execute({ path: 'big.log', offset: ${TOTAL}, limit: 5 });
console.log(JSON.stringify({ result, maxRssKb: process.resourceUsage().maxRSS }));
`);
    const child = spawn(process.execPath, ['--max-old-space-size=96', ...execArgv, script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 0, stderr);
    const { result, maxRssKb } = JSON.parse(stdout) as { result: { output: string; isError: boolean }; maxRssKb: number };
    assert.equal(result.output, `${TOTAL}\tthe end 3\n\n[lines ${TOTAL}-${TOTAL} of ${TOTAL}]`);
    // Node (and tsx, when the tests run uncompiled) take some 100 MB; the file is 520 MB.
    assert.ok(maxRssKb < 256 * 1024, `${Math.round(maxRssKb / 1024)} MB resident at most`);
  });
});
