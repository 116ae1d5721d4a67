// Cost and savings that are true, through the real CLI with scripted models (no key): a scripted
// model costs nothing and says so instead of "$0 estimated"; what replay saved names only what it
// saved (never "0 commands"), a declined command is no command saved, and the steps `continue`
// replays to rebuild a finished run's conversation are not "saved", on the screen, in --json's
// savings event and in `log`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { runCli } from '../helpers/cli.js';

const scratch = useScratch();

// A repository with a scripted model in its .git (outside the working tree), and a user config
// folder whose settings deny `rm`.
async function scripted(turns: ScriptTurn[]) {
  const repo = await scratch.repo({ 'keep.txt': 'keep\n' });
  const script = join(repo.root, '.git', 'turns.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const config = join(scratch.dir('savepoint-home-'), '.config');
  mkdirSync(join(config, 'savepoint'), { recursive: true });
  writeFileSync(join(config, 'savepoint', 'settings.json'), JSON.stringify({ permissions: { deny: ['run_bash(rm *)'] } }));
  const cli = (args: string[]) => runCli([args[0]!, '--yes', '--no-sandbox', '--model', `script:${script}`, ...args.slice(1)], { cwd: repo.root, env: { XDG_CONFIG_HOME: config } });
  return { repo, cli };
}

interface JsonLine {
  type: string;
  [field: string]: unknown;
}
const jsonLines = (stdout: string): JsonLine[] => stdout.trim().split('\n').map((line) => JSON.parse(line) as JsonLine);
const savedSentence = (text: string) => text.replace(/\n/g, ' ').match(/Replayed \d+ steps? from the journal in [^;]*;[^.]*\./)?.[0];

describe('cost and savings', { concurrency: true }, () => {
  test('a resume names only what it saved: no "0 commands", and a declined command is no command saved', async () => {
    const { cli } = await scripted([
      { tools: [{ name: 'run_bash', input: { command: 'rm keep.txt' } }] }, // denied by the settings: declined, never run
      { tools: [{ name: 'run_bash', input: { command: 'echo ran' } }] },
      { text: 'Done.' },
    ]);
    const task = 'tidy up';
    assert.equal((await cli(['run', '--max-steps', '1', task])).code, 3, 'stopped at --max-steps after the first model call');

    // Replays one model call: that is all it saved, and all it says.
    const second = await cli(['run', '--max-steps', '4', task]);
    assert.equal(second.code, 3, second.stdout + second.stderr);
    const once = savedSentence(second.stdout);
    assert.match(once ?? '', /^Replayed 1 step from the journal in \d+ ms instead of \d+ ms: 1 model call, [\d,]+ tokens not re-run; 3 steps ran live\.$/, second.stdout);
    assert.doesNotMatch(second.stdout, /\b0 commands?\b|\b0 model calls\b/);

    // Replays two model calls, the declined command and the one that ran: one command saved.
    const third = await cli(['run', '--json', task]);
    assert.equal(third.code, 0, third.stderr);
    const savings = jsonLines(third.stdout).find((line) => line.type === 'savings')!;
    assert.deepEqual([savings.replayedSteps, savings.modelCalls, savings.commands, savings.estimatedCostUsd], [4, 2, 1, 0]);
    assert.match(savedSentence(third.stderr) ?? '', /: 2 model calls, [\d,]+ tokens, 1 command not re-run; 1 step ran live\.$/, third.stderr);

    // A scripted model calls no API: no estimate anywhere, live or replayed.
    for (const out of [second.stdout, third.stderr]) {
      assert.match(out, /\(scripted model: no cost(; live this time [\d,]+ in, [\d,]+ out)?\)/);
      assert.doesNotMatch(out, /estimated|\$\d|<\$/);
    }
  });

  test("continue on a finished run: replaying its steps to rebuild the conversation saves nothing, on the screen, in --json and in log", async () => {
    const { repo, cli } = await scripted([
      { tools: [{ name: 'run_bash', input: { command: 'cat keep.txt' } }] },
      { text: 'It says keep.' },
      { text: 'Still keep.' },
      { text: 'Keep, again.' },
    ]);
    assert.equal((await cli(['run', 'read keep'])).code, 0);

    const next = await cli(['continue', 'say it again']);
    assert.equal(next.code, 0, next.stdout + next.stderr);
    assert.match(next.stdout, /Continuing: 3 finished steps replay first/);
    assert.equal(savedSentence(next.stdout), undefined, `no savings claimed:\n${next.stdout}`);
    assert.doesNotMatch(next.stdout, /not re-run/);

    const json = await cli(['continue', '--json', 'and once more']);
    assert.equal(json.code, 0, json.stderr);
    const savings = jsonLines(json.stdout).find((line) => line.type === 'savings')!;
    assert.deepEqual([savings.replayedSteps, savings.modelCalls, savings.commands, savings.tokens], [0, 0, 0, { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 }]);
    const summary = jsonLines(json.stdout).find((line) => line.type === 'summary')!;
    assert.equal(summary.replayedSteps, 5, 'the summary still counts every step it replayed (3 of the run, 2 of the first follow-up)');

    const log = await runCli(['log', '--json'], { cwd: repo.root });
    assert.equal(log.code, 0, log.stderr);
    const timeline = JSON.parse(log.stdout) as { run: { id: string }; saved: { replayedSteps: number; byAttempt: unknown[] }; totals: { estimatedCostUsd: number } };
    assert.deepEqual([timeline.saved.replayedSteps, timeline.saved.byAttempt, timeline.totals.estimatedCostUsd], [0, [], 0]);
    const step = await runCli(['show', timeline.run.id, '1'], { cwd: repo.root });
    assert.match(step.stdout, /usage +[\d,]+ tokens in, [\d,]+ out \(scripted model: no cost\)/);
    const human = await runCli(['log'], { cwd: repo.root, env: { COLUMNS: '200' } });
    // Two follow-ups of a finished run are no resume: nothing is claimed as saved.
    assert.match(human.stdout, /Resumes saved +nothing yet: the run was never resumed/);
    assert.doesNotMatch(human.stdout, /handed back from the journal/);
    assert.match(human.stdout, /scripted model: no cost/);
    assert.doesNotMatch(human.stdout, /\$\d|<\$/);
  });

  test("the same continue again after its answer stopped saves the answer's steps, not the conversation before it", async () => {
    const { cli } = await scripted([
      { text: 'It says keep.' },
      { tools: [{ name: 'run_bash', input: { command: 'cat keep.txt' } }] },
      { text: 'Still keep.' },
    ]);
    assert.equal((await cli(['run', 'read keep'])).code, 0);
    // The follow-up (step 2) and its model call (step 3) are recorded; the limit stops before the command (step 4).
    assert.equal((await cli(['continue', '--max-steps', '3', 'look again'])).code, 3);
    const again = await cli(['continue', '--json', 'look again']);
    assert.equal(again.code, 0, again.stderr);
    const savings = jsonLines(again.stdout).find((line) => line.type === 'savings')!;
    assert.deepEqual([savings.replayedSteps, savings.modelCalls, savings.commands], [2, 1, 0]);
    assert.match(savedSentence(again.stderr) ?? '', /^Replayed 2 steps from the journal in \d+ ms instead of \d+ ms: 1 model call, [\d,]+ tokens not re-run; 2 steps ran live\.$/, again.stderr);
  });
});
