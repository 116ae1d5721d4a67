// The CLI in pipes and terminals, as git behaves: a reader that closes the pipe early (`| head`)
// ends a reading command quietly with 141 and never stops a run; step lines fit COLUMNS; `show`
// pages on a terminal; a missing argument gets savepoint's own usage paragraph; `runs` does not
// evaluate the step diffs, and no part of the command line is execa. (Every --help's examples and exit codes: main.test.ts and usage.test.ts.)
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { displayWidth } from '../../src/format/text.js';
import { assertNoStack, assertOneParagraph, BIN, baseEnv, ROOT, runCli, startCli, type CliProcess } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();

// Ends the reading side of the child's stdout as soon as its first bytes arrive, like `| head -c1`.
async function closeAfterFirstChunk(cli: CliProcess) {
  cli.child.stdout!.once('data', () => cli.child.stdout!.destroy());
  return cli.result;
}

function writeScript(dir: string, name: string, turns: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ turns }));
  return `script:${path}`;
}

// Each of `turns` reads README.md `calls` times (at a new offset each, so each is its own step).
function readingTurns(turns: number, calls: number): unknown[] {
  const reads = Array.from({ length: turns }, (_, t) => ({
    tools: Array.from({ length: calls }, (_, c) => ({ name: 'read_file', input: { path: 'README.md', offset: t * calls + c + 1 } })),
  }));
  return [...reads, { text: 'Read it all.' }];
}

describe('a closed pipe', { concurrency: true }, () => {
  let repo: TempRepo;
  let dir: string;
  before(async () => {
    repo = await scratch.repo({ 'README.md': '# pipes\n' });
    dir = scratch.dir('savepoint-pipes-');
    const model = writeScript(dir, 'flood.json', [
      { tools: [{ name: 'run_bash', input: { command: 'seq 1 200000' } }] },
      ...readingTurns(4, 10),
    ]);
    const made = await runCli(['run', '--yes', '--run', 'flood', '--model', model, 'print a lot'], { cwd: repo.root });
    assert.equal(made.code, 0, made.stderr);
  });

  test('ends `show` of a 1.2 MB step quietly with status 141, as git does', async () => {
    const result = await closeAfterFirstChunk(startCli(['show', 'flood', '2'], { cwd: repo.root }));
    assert.equal(result.signal, null);
    assert.equal(result.code, 141, result.stderr);
    assert.equal(result.stderr, '');
  });

  for (const args of [['log', 'flood'], ['runs'], ['log', 'flood', '--json']]) {
    test(`ends \`${args.join(' ')}\` quietly (0 when all was written first, else 141)`, async () => {
      const result = await closeAfterFirstChunk(startCli(args, { cwd: repo.root }));
      assert.ok(result.code === 0 || result.code === 141, `exit ${result.code}: ${result.stderr}`);
      assert.equal(result.stderr, '');
    });
  }

  test('never stops a run: it goes on to its end and stops writing to the closed stdout', async () => {
    const model = writeScript(dir, 'reads.json', readingTurns(6, 10));
    const result = await closeAfterFirstChunk(
      startCli(['run', '--yes', '--run', 'piped', '--model', model, 'read while piped'], { cwd: repo.root }),
    );
    assert.equal(result.code, 0, result.stderr);
    assertNoStack(result.stderr);
    const log = await runCli(['log', 'piped', '--json'], { cwd: repo.root });
    const timeline = JSON.parse(log.stdout) as { run: { status: string }; steps: unknown[] };
    assert.equal(timeline.run.status, 'finished');
    assert.equal(timeline.steps.length, 6 * 11 + 1, 'every model turn and read was recorded');
  });
});

describe('step lines and COLUMNS', { concurrency: true }, () => {
  const LONG = 'Let me read the README first, then think about it at some length 👩‍💻 so that this streamed text wraps.';
  const turns = [
    { text: LONG, tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
    { tools: [{ name: 'run_bash', input: { command: `echo '${'x'.repeat(40)}😀😀😀 and then a long tail of output that goes on'` } }] },
    { tools: [{ name: 'write_file', input: { path: `notes-${'n'.repeat(20)}-🎉🎉.md`, content: '# notes\n' } }] },
    { text: 'Done.' },
  ];

  for (const columns of [60, 200]) {
    test(`at COLUMNS=${columns} every step line, model text line and summary line fits (emoji take two columns), live and replayed`, async () => {
      const repo = await scratch.repo({ 'README.md': '# columns\n' });
      // Named relative to the repository (the path is in the header, which wraps at 60 columns by the
      // length of the temporary folder's name): inside .git, so the run's working tree is untouched.
      writeScript(join(repo.root, '.git'), 'turns.json', turns);
      const model = 'script:.git/turns.json';
      const env = { COLUMNS: String(columns) };
      const live = await runCli(['run', '--yes', '--run', 'cols', '--model', model, 'fit the screen'], { cwd: repo.root, env });
      const again = await runCli(['run', '--yes', '--run', 'cols', '--model', model, 'fit the screen'], { cwd: repo.root, env });
      for (const [what, result, label] of [
        ['live', live, 'LIVE'],
        ['replayed', again, 'REPLAYED'],
      ] as const) {
        assert.equal(result.code, 0, result.stderr);
        const lines = result.stdout.split('\n');
        const steps = lines.filter((line) => /^\s*#\d+ /.test(line));
        assert.equal(steps.length, 7, `${what}:\n${result.stdout}`);
        const wide = columns >= 100;
        for (const line of steps) assert.match(line, wide ? new RegExp(`#\\d+  ${label} \\(`) : new RegExp(`#\\d+  ${label} +[a-z]`), line);
        const summaryAt = lines.findIndex((line) => line.startsWith('Replayed '));
        const summary =
          summaryAt >= 0 ? lines.slice(summaryAt, lines.indexOf('', summaryAt) === -1 ? undefined : lines.indexOf('', summaryAt)) : [];
        const text = lines.filter((line) => line.startsWith('      '));
        // In a pipe the model's text is not streamed: each turn that calls tools shows it on one line, cut to the width.
        assert.equal(text.length, 1, `the model's text on one line, ${what}:\n${result.stdout}`);
        assert.ok(text[0]!.trim().startsWith('Let me read the README first'), text[0]);
        if (what === 'replayed') assert.ok(summary.length >= 1, `a savings summary:\n${result.stdout}`);
        for (const line of [...steps, ...text, ...summary])
          assert.ok(displayWidth(line) <= columns, `${displayWidth(line)} columns > ${columns}: ${line}`);
      }
      if (columns === 60)
        assert.ok(live.stdout.includes('👩‍💻') || live.stdout.includes('…'), 'the emoji survives or the line is cut before it');
      assert.doesNotMatch(live.stdout + again.stdout, /[\ud800-\udbff](?![\udc00-\udfff])/, 'no half emoji');
    });
  }
});

describe('help and usage', { concurrency: true }, () => {
  // Each command's --help ends with its examples and exit codes: checked in-process on the program
  // (test/cli/main.test.ts); through the process (exit 0, on stdout, 141 listed) in usage.test.ts.
  test('`savepoint show 4` (a missing argument) exits 2 with one usage paragraph', async () => {
    const result = await runCli(['show', '4'], { cwd: scratch.dir() });
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    const message = assertOneParagraph(result.stderr);
    assert.match(
      message,
      /^savepoint: missing required argument 'step'\. Usage: savepoint show \[options\] <run> <step>, for example savepoint show \S+ 4\. "savepoint show --help" lists/,
    );
    assert.doesNotMatch(result.stderr, /^error:/m, "commander's own message is not printed as well");
  });
});

describe('the terminal', () => {
  let repo: TempRepo;
  before(async () => {
    repo = await scratch.repo({ 'README.md': '# pager\n' });
    const model = writeScript(scratch.dir('savepoint-pager-'), 'turns.json', [
      { tools: [{ name: 'run_bash', input: { command: 'seq 1 500' } }] },
      { tools: [{ name: 'write_file', input: { path: 'count.txt', content: '500\n' } }] },
      { text: 'Counted.' },
    ]);
    const made = await runCli(['run', '--yes', '--run', 'paged', '--model', model, 'count'], { cwd: repo.root });
    assert.equal(made.code, 0, made.stderr);
  });

  // `script` runs the command on a pseudo-terminal, the way a person's shell would.
  const onTerminal = (command: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile('script', ['-qec', command, '/dev/null'], { cwd: repo.root, env: { ...baseEnv(), ...env } }, (error, stdout) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout }),
      );
    });

  test('`show` of a long step goes through SAVEPOINT_PAGER on a terminal, and never when piped', async (t) => {
    if (!existsSync('/usr/bin/script')) return t.skip('util-linux `script` (a pseudo-terminal) is not installed');
    const paged = join(scratch.dir('savepoint-paged-'), 'paged.txt');
    const shown = await onTerminal(`node ${BIN} show paged 2`, { SAVEPOINT_PAGER: `cat > ${paged}`, PAGER: 'false' });
    assert.equal(shown.code, 0, shown.out);
    const text = readFileSync(paged, 'utf8');
    assert.match(text, /run_bash/);
    assert.match(text, /\n\s+500\n/);
    assert.doesNotMatch(shown.out, /\b499\b/, 'the step went to the pager, not straight to the terminal');

    const off = await onTerminal(`node ${BIN} show paged 2`, { SAVEPOINT_PAGER: 'cat', PAGER: `cat > ${paged}.2` });
    assert.match(off.out, /\b499\b/);
    assert.equal(existsSync(`${paged}.2`), false, 'SAVEPOINT_PAGER=cat wins over PAGER');

    const piped = await runCli(['show', 'paged', '2'], { cwd: repo.root, env: { SAVEPOINT_PAGER: `cat > ${paged}.3` } });
    assert.match(piped.stdout, /\b499\b/);
    assert.equal(existsSync(`${paged}.3`), false, 'no pager when stdout is a pipe');
  });

  test('`savepoint runs` evaluates no module of the step diffs, which `show` does; execa is in no part of the command line', async () => {
    // By V8's coverage of the command line's one script (scripts/bundle.js): each module of src/ is
    // a function named by its path there, run when the module is first needed. Without the compiled
    // code kept, so that the coverage's flags leave the cache of the other tests alone.
    const evaluated = async (args: string[]): Promise<Map<string, number>> => {
      const dir = scratch.dir('savepoint-coverage-');
      const ran = await runCli(args, { cwd: repo.root, env: { NODE_V8_COVERAGE: dir, NODE_DISABLE_COMPILE_CACHE: '1' } });
      assert.equal(ran.code, 0, ran.stderr);
      const counts = new Map<string, number>();
      for (const name of readdirSync(dir)) {
        const report = JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
          result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
        };
        for (const script of report.result.filter((s) => s.url.endsWith('/dist/cli.cjs')))
          for (const fn of script.functions.filter((f) => f.functionName.startsWith('src/')))
            counts.set(fn.functionName, Math.max(counts.get(fn.functionName) ?? 0, fn.ranges[0]!.count));
      }
      return counts;
    };
    const runs = await evaluated(['runs']);
    assert.equal(runs.get('src/cli/commands/runs.ts'), 1, 'the coverage sees the modules runs evaluates');
    assert.equal(runs.get('src/cli/view/step-diff.ts') ?? 0, 0, '`runs` evaluates no module of the step diffs');
    const show = await evaluated(['show', 'paged', '4']);
    assert.equal(show.get('src/cli/view/step-diff.ts'), 1, '`show` evaluates the step diffs');
    assert.doesNotMatch(
      readFileSync(join(ROOT, 'dist', 'cli.cjs'), 'utf8'),
      /execa/,
      'git runs through node:child_process (execa cost log --html 160-200 ms to load)',
    );
  });
});
