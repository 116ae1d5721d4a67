// Subagents (the task tool), through the real CLI against the local Messages API server: two task
// calls in one answer run at the same time; the parent killed with SIGKILL while one subagent waits
// for its model and the other has finished goes on, with the identical command, from where each
// stopped (no finished request sent again, no finished command run again); both subagents are
// runs of their own in the journal, with their lineage, shown under their parent by runs and log.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { runIdForTask, subagentRunId } from '../../src/journal/run-id.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import {
  assertToolPairing,
  assistantMessages,
  fakeEnv,
  git,
  journalJson,
  journalPaths,
  lastToolResults,
  resultText,
  runCli,
  startCli,
  waitUntil,
} from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

const TASK = 'have two helpers each add a line to log.txt';
const ALPHA = 'ALPHA: append alpha to log.txt, then say you are done';
const BETA = 'BETA: append beta to log.txt, then say you are done';

// Whose request this is: the parent's, or a subagent's (its prompt is its first message).
function who(body: MessagesBody): 'parent' | 'alpha' | 'beta' {
  const first = body.messages[0]?.content;
  const text = typeof first === 'string' ? first : JSON.stringify(first);
  return text.includes('ALPHA:') ? 'alpha' : text.includes('BETA:') ? 'beta' : 'parent';
}

const TURNS: Record<'parent' | 'alpha' | 'beta', ScriptTurn[]> = {
  parent: [
    {
      text: 'Two helpers at once.',
      tools: [
        { name: 'task', input: { description: 'alpha line', prompt: ALPHA } },
        { name: 'task', input: { description: 'beta line', prompt: BETA } },
      ],
    },
    { text: 'Both done.' },
  ],
  alpha: [{ tools: [{ name: 'run_bash', input: { command: 'echo alpha >> log.txt' } }] }, { text: 'alpha finished' }],
  beta: [{ tools: [{ name: 'run_bash', input: { command: 'echo beta >> log.txt' } }] }, { text: 'beta finished' }],
};

async function runJson(root: string, run: string): Promise<Record<string, unknown> | undefined> {
  const shown = await git(root, ['show', `agent-journal:runs/${run}/run.json`]);
  return shown.code === 0 ? (JSON.parse(shown.stdout) as Record<string, unknown>) : undefined;
}

describe('subagents', () => {
  test('two subagents run at once; killed while one waits for its model and the other finished, the identical command finishes both without asking or running anything twice', async () => {
    // Each subagent's first model call is answered only once both have asked: they ran at once.
    let firstCalls = 0;
    let bothAsked!: () => void;
    const overlap = new Promise<void>((resolve) => (bothAsked = resolve));
    // alpha's second model call hangs in the first attempt, until the parent is killed.
    let holdAlpha = true;
    const fake = await scratch.fake((body) => TURNS[who(body)][assistantMessages(body)] ?? { text: 'out of turns' }, undefined, {
      gate: (index, body) => {
        const whose = who(body);
        if (whose !== 'parent' && index === 0) {
          if (++firstCalls === 2) bothAsked();
          return overlap;
        }
        if (whose === 'alpha' && index === 1 && holdAlpha) return new Promise(() => {});
        return undefined;
      },
    });
    const repo = await scratch.repo();
    const parent = runIdForTask(TASK);
    const [alphaRun, betaRun] = [subagentRunId(parent, 2), subagentRunId(parent, 3)];
    const args = ['run', '--yes', TASK];

    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(
      () => fake.requests.some((body) => who(body) === 'alpha' && assistantMessages(body) === 1),
      "alpha's second model call",
      { child: first },
    );
    // beta finished (its run.json says so) while alpha waits for its model.
    for (;;) {
      if ((await runJson(repo.root, betaRun))?.status === 'finished') break;
      assert.equal(first.child.exitCode, null, `the CLI ended early:\n${first.stdout}\n${first.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');
    holdAlpha = false;

    // The parent's last checkpoint is of the whole tree as its last file step ended (beta's task):
    // whether alpha's line was in it yet is a race of the two subagents. The resume says subagents
    // were at work exactly when the files differ from that checkpoint.
    const parentEntries = (await journalPaths(repo.root)).filter((path) => path.startsWith(`runs/${parent}/steps/`)).sort();
    let checkpoint: string | undefined;
    for (const path of parentEntries) checkpoint = (await journalJson<{ checkpoint?: string }>(repo.root, path)).checkpoint ?? checkpoint;
    const checkpointed = checkpoint ? await git(repo.root, ['show', `${checkpoint}:log.txt`]) : undefined;
    const differed = checkpointed?.stdout !== readFileSync(join(repo.root, 'log.txt'), 'utf8');
    const before = fake.requests.length;
    const second = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
    const fresh = fake.requests.slice(before);
    assert.deepEqual(
      fresh.map((body) => `${who(body)} ${assistantMessages(body)}`).sort(),
      ['alpha 1', 'parent 1'],
      "the identical command asks only for alpha's unfinished turn and the parent's next one: nothing of beta, nothing finished",
    );
    if (differed) assert.match(second.stdout, /Subagents were at work when the run stopped/);
    else assert.doesNotMatch(second.stdout, /Subagents were at work|differ from the journal/);
    assert.deepEqual(
      readFileSync(join(repo.root, 'log.txt'), 'utf8').split('\n').filter(Boolean).sort(),
      ['alpha', 'beta'],
      'each command ran once',
    );
    // The parent's next request carries both answers, as the results of its two task calls.
    const last = fake.requests.at(-1)!;
    assert.equal(who(last), 'parent');
    assert.deepEqual(lastToolResults(last).map(resultText), ['alpha finished', 'beta finished']);
    assert.match(second.stdout, /Both done\./);
    assertToolPairing(fake.requests.filter((body) => who(body) === 'parent'));

    // Both subagents are runs of their own, with their lineage to the parent's steps.
    for (const [run, step, description] of [
      [alphaRun, 2, 'alpha line'],
      [betaRun, 3, 'beta line'],
    ] as const) {
      const record = await journalJson<{ status: string; lineage: unknown; config: { tools: { name: string }[] } }>(
        repo.root,
        `runs/${run}/run.json`,
      );
      assert.equal(record.status, 'finished');
      assert.deepEqual(record.lineage, { parentRun: parent, parentStep: step, description });
      assert.ok(!record.config.tools.some((tool) => tool.name === 'task'), 'a subagent gets every tool but task');
    }
    const parentRecord = await journalJson<{ status: string; config: { tools: { name: string }[] } }>(repo.root, `runs/${parent}/run.json`);
    assert.equal(parentRecord.status, 'finished');
    assert.ok(parentRecord.config.tools.some((tool) => tool.name === 'task'));

    // runs: each subagent right under its parent, marked; log <parent>: where each ran and its answer;
    // log <child>: its own steps, and whose it is; the page shows them inside the parent's task steps.
    const env = fakeEnv(fake, { COLUMNS: '200' });
    const runs = await runCli(['runs'], { cwd: repo.root, env });
    const rows = runs.stdout.split('\n').filter((line) => line.includes(parent));
    assert.match(rows[0]!, new RegExp(`^${parent} `));
    assert.match(rows[1]!, new RegExp(`└ ${alphaRun.replace('.', '\\.')} `));
    assert.match(runs.stdout, /subagent "alpha line" of \S+'s task call at #2/);
    const log = await runCli(['log', parent], { cwd: repo.root, env });
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, new RegExp(`↳ subagent run ${betaRun.replace('.', '\\.')}\\n\\s+▌ beta finished`));
    const childLog = await runCli(['log', alphaRun], { cwd: repo.root, env });
    assert.match(childLog.stdout, /subagent "alpha line" of run \S+, started by its task call at #2/);
    assert.match(childLog.stdout, /run_bash "echo alpha >> log\.txt"/);
    const page = join(repo.root, '.git', 'timeline.html');
    assert.equal((await runCli(['log', parent, '--html', page], { cwd: repo.root, env })).code, 0);
    assert.match(readFileSync(page, 'utf8'), /Subagent <code>[^<]+\.task3<\/code> · finished[\s\S]*echo beta &gt;&gt; log\.txt/);
  });
});
