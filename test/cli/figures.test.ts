// One set of figures: a real interactive session on a terminal (tmux) against the fake Anthropic
// server, with a task, /compact, /model, a follow-up killed twice in the middle of its answer (kill
// -9 of the session, then of `savepoint -c`), and `savepoint resume --json` finishing it. Then /cost,
// the run line, `runs`, `log`, `log --json` and `log --html` are held against the judge: figures
// computed here from the journal's own entries (every finished model call and compaction, its
// usage, its model's list price) and from what the test did (two kills: two resumes; the steps the
// killed follow-up had finished, handed back by each resume, saved once).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { estimateCost, priceFor } from '../../src/model/pricing.js';
import { formatCount, formatUsd, plural } from '../../src/format/numbers.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, journalJson, journalPaths, runCli, runIds, waitUntil } from '../helpers/cli.js';
import { exited, openSession, type Terminal } from '../helpers/tmux.js';

const scratch = useScratch();

interface Tokens {
  input: number;
  output: number;
}

// The judge's view of one finished model call (a turn or a compaction), from its result entry.
interface Call extends Tokens {
  step: number;
  costUsd: number;
}

// What the journal itself says the run's model calls were: each `model` or `compact` result entry,
// its usage and the model that answered it, priced from the list.
async function callsInJournal(root: string, run: string, pinned: string): Promise<Call[]> {
  const calls: Call[] = [];
  for (const path of await journalPaths(root)) {
    if (!path.startsWith(`runs/${run}/steps/`) || !/-(model|compact)\.json$/.test(path)) continue;
    const entry = await journalJson<{ step: number; phase: string; kind: string; usage?: { inputTokens?: number; outputTokens?: number }; result?: { model?: string }; input?: { model?: string } }>(root, path);
    if (entry.phase !== 'result') continue;
    const tokens = { input: entry.usage?.inputTokens ?? 0, output: entry.usage?.outputTokens ?? 0 };
    const model = entry.result?.model ?? entry.input?.model ?? pinned;
    calls.push({ step: entry.step, ...tokens, costUsd: estimateCost(priceFor(model), { ...tokens, cacheCreation: 0, cacheRead: 0 }) });
  }
  return calls.sort((a, b) => a.step - b.step);
}

function sum(calls: readonly Call[]): Tokens & { costUsd: number; calls: number } {
  return calls.reduce((t, c) => ({ input: t.input + c.input, output: t.output + c.output, costUsd: t.costUsd + c.costUsd, calls: t.calls + 1 }), { input: 0, output: 0, costUsd: 0, calls: 0 });
}

const tokensText = (t: Tokens) => `${formatCount(t.input)} in, ${formatCount(t.output)} out`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&');

// The line /cost printed last on `term`.
async function cost(term: Terminal): Promise<string> {
  const before = term.screen().split('› /cost').length;
  term.type('/cost');
  // The line after the typed command must have come (not only the command's echo and its newline).
  const screen = await term.waitFor(new RegExp(`(› /cost\\n[^\\n]*\\S[^\\n]*\\n[\\s\\S]*){${before}}`));
  return screen.split('› /cost\n').at(-1)!.split('\n')[0]!.trim();
}

const lastMessage = (body: MessagesBody) => JSON.stringify(body.messages.at(-1));

describe('one set of figures', () => {
  test('/cost, the run line, runs, log, log --json and the HTML page agree with the journal on calls, tokens, cost, resumes and what replay saved', async () => {
    const repo = await scratch.repo({ 'README.md': '# figures\n' });
    // The follow-up ("and then") reads twice, then answers. `hold` is the number of its reads after
    // which the next call is held (a minute): the call a kill -9 lands in.
    let hold: number | undefined;
    const readsAfterFollowUp = (body: MessagesBody) => {
      const at = body.messages.findIndex((m) => JSON.stringify(m).includes('and then'));
      return at < 0 ? undefined : body.messages.slice(at).filter((m) => JSON.stringify(m).includes('tool_result')).length;
    };
    const fake = await scratch.fake((body): ScriptTurn => {
      const reads = readsAfterFollowUp(body);
      const held = reads !== undefined && reads === hold ? { delayMs: 60_000 } : {};
      if (reads === undefined) return lastMessage(body).includes('tool_result') ? { text: 'First answer.' } : { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] };
      if (reads < 2) return { text: `Reading again (${reads + 1}).`, tools: [{ name: 'read_file', input: { path: 'README.md' } }], ...held };
      return { text: 'Second answer.', ...held };
    });
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const opts = { cwd: repo.root, env };
    const asked = async (reads: number) => waitUntil(() => fake.requests.some((r) => readsAfterFollowUp(r) === reads), `the follow-up's call after ${reads} reads to be asked`);

    // The session: a task, /cost, /compact, /cost, /model, and a follow-up killed mid-answer.
    const first = openSession(scratch, ['--yes', '--no-sandbox', '--model', 'claude-sonnet-5-5'], opts);
    await first.waitFor(/^›\s*$/m);
    first.type('read the readme');
    await first.waitFor(/answers "First answer\."[\s\S]*^›\s*$/m);
    const [run] = await runIds(repo.root);
    const afterTask = sum(await callsInJournal(repo.root, run!, 'claude-sonnet-5-5'));
    assert.equal(afterTask.calls, 2);
    assert.equal(await cost(first), `Tokens ${tokensText(afterTask)} (${formatUsd(afterTask.costUsd)} estimated; live this session ${tokensText(afterTask)}, ${formatUsd(afterTask.costUsd)}) · 2 model calls (2 live this session) · 3 steps`);

    first.type('/compact');
    await first.waitFor(/compact: asked for[\s\S]*^›\s*$/m);
    const calls = await callsInJournal(repo.root, run!, 'claude-sonnet-5-5');
    const compaction = calls.at(-1)!;
    assert.equal(compaction.step, 5, 'the compaction is step #5, after its config step');
    assert.ok(compaction.input > 0, 'the compaction call used tokens');
    const afterCompact = sum(calls);
    // The turn's run line (wrapped to the terminal's width): the compaction was this turn's live call.
    assert.match(first.screen().replace(/\n/g, ' '), new RegExp(`Tokens ${escape(tokensText(afterCompact))} \\(${escape(formatUsd(afterCompact.costUsd))} estimated; live this time ${escape(tokensText(compaction))}, ${escape(formatUsd(compaction.costUsd))}\\) · 3 model calls · 5 steps \\(3 replayed, 2 live\\)`));
    assert.equal(await cost(first), `Tokens ${tokensText(afterCompact)} (${formatUsd(afterCompact.costUsd)} estimated; live this session ${tokensText(afterCompact)}, ${formatUsd(afterCompact.costUsd)}) · 3 model calls (3 live this session) · 5 steps`);

    first.type('/model claude-opus-4-6');
    await first.waitFor(/From the next turn on, claude-opus-4-6 answers/);
    hold = 1;
    first.type('and then');
    await asked(1);
    first.kill9();
    assert.equal(await exited(first), 137);

    // `savepoint -c` finishes the turn first: it asks that call again, reads, and is killed again in
    // the same answer.
    hold = 2;
    const second = openSession(scratch, ['-c', '--yes', '--no-sandbox'], opts);
    await asked(2);
    second.kill9();
    assert.equal(await exited(second), 137);

    // `resume` finishes it: it hands back what the follow-up had done (#7-#11) and asks its answer.
    hold = undefined;
    const resumed = await runCli(['resume', '--json', run!], opts);
    assert.equal(resumed.code, 0, resumed.stderr);
    const events = resumed.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const savings = events.find((e) => e.type === 'savings') as { replayedSteps: number; modelCalls: number; tokens: Tokens; estimatedCostUsd: number };
    const summary = events.find((e) => e.type === 'summary') as { modelCalls: number; liveModelCalls: number; tokens: Tokens; estimatedCostUsd: number; liveTokens: Tokens };

    // The judge, from the finished journal.
    const all = await callsInJournal(repo.root, run!, 'claude-sonnet-5-5');
    assert.deepEqual(all.map((c) => c.step), [1, 3, 5, 8, 10, 12], 'the task\'s two turns, the compaction, the follow-up\'s three turns');
    const total = sum(all);
    // What the resumes handed back: the follow-up's turns finished before the kills (#8 before both, #10 before the second).
    const saved = sum(all.filter((c) => c.step === 8 || c.step === 10));
    const record = await journalJson<{ attempts: Array<{ number: number; firstLiveStep: number; end?: { how: string } }> }>(repo.root, `runs/${run}/run.json`);
    const killed = record.attempts.filter((a) => !a.end);
    assert.equal(killed.length, 2, 'run.json shows the two killed attempts');
    const resumes = record.attempts.filter((_, i) => i > 0 && !record.attempts[i - 1]!.end);
    assert.equal(resumes.length, 2);

    // The resume's own figures: it saved the follow-up's finished steps (#7 user, #8 model, #9 read, #10 model, #11 read).
    assert.deepEqual([savings.replayedSteps, savings.modelCalls, savings.tokens.input, savings.tokens.output], [5, 2, saved.input, saved.output]);
    assert.deepEqual([summary.modelCalls, summary.liveModelCalls, summary.tokens.input, summary.tokens.output], [6, 1, total.input, total.output]);
    assert.equal(summary.estimatedCostUsd, Math.round(total.costUsd * 1e6) / 1e6);

    // runs, text and --json.
    const runsJson = JSON.parse((await runCli(['runs', '--json'], opts)).stdout) as { runs: Array<{ modelCalls: number; tokens: Tokens; resumes: number }> };
    assert.deepEqual([runsJson.runs[0]!.modelCalls, runsJson.runs[0]!.tokens.input, runsJson.runs[0]!.tokens.output, runsJson.runs[0]!.resumes], [6, total.input, total.output, 2]);
    const runsText = (await runCli(['runs'], opts)).stdout;
    assert.match(runsText, new RegExp(`${escape(run!)}\\s+finished\\s+12\\s+6\\s+\\S+ / ${total.output}\\s+2×`), runsText);

    // log --json: the totals, the resumes, and what replay saved, each saved call once.
    const timeline = JSON.parse((await runCli(['log', run!, '--json'], opts)).stdout) as {
      run: { modelCalls: number; resumes: number };
      totals: { modelCalls: number; tokens: Tokens; estimatedCostUsd: number };
      saved: { replayedSteps: number; modelCalls: number; tokens: Tokens; estimatedCostUsd: number; byAttempt: Array<{ attempt: number; replayedSteps: number; modelCalls: number }> };
    };
    assert.deepEqual([timeline.run.modelCalls, timeline.totals.modelCalls, timeline.totals.tokens.input, timeline.totals.tokens.output, timeline.run.resumes], [6, 6, total.input, total.output, 2]);
    assert.equal(timeline.totals.estimatedCostUsd, summary.estimatedCostUsd);
    assert.deepEqual(timeline.saved.byAttempt.map((b) => [b.attempt, b.replayedSteps, b.modelCalls]), [[resumes[0]!.number, 3, 1], [resumes[1]!.number, 5, 2]], 'the resumes handed back #7-#9 and #7-#11; the /compact and /model attempts saved nothing');
    assert.deepEqual([timeline.saved.replayedSteps, timeline.saved.modelCalls, timeline.saved.tokens.input, timeline.saved.tokens.output], [5, 2, saved.input, saved.output], 'in total, each saved step once (#7-#9 were handed back twice)');
    assert.equal(timeline.saved.estimatedCostUsd, Math.round(saved.costUsd * 1e6) / 1e6);

    // log, for people.
    const log = (await runCli(['log', run!], { ...opts, env: { ...env, COLUMNS: '200' } })).stdout;
    assert.match(log, new RegExp(`Totals +12 steps · 6 model calls · ${escape(formatCount(total.input))} tokens in, ${total.output} out \\(${escape(formatUsd(total.costUsd))}\\)`));
    assert.match(log, new RegExp(`Resumes saved 2 model calls, ${escape(formatCount(saved.input + saved.output))} tokens \\(`));
    assert.match(log, /5 steps handed back from the journal instead of run again/);

    // The HTML page.
    const page = join(scratch.dir('savepoint-html-'), 'run.html');
    assert.equal((await runCli(['log', run!, '--html', page], opts)).code, 0);
    const html = readFileSync(page, 'utf8');
    assert.match(html, /resumed 2×/);
    assert.match(html, /<div class="label">Steps<\/div><div class="value">12<\/div><div class="detail">6 model calls · /);
    assert.match(html, new RegExp(`<div class="label">Tokens</div><div class="value">${escape(formatCount(total.input))} in · ${total.output} out</div><div class="detail">${escape(formatUsd(total.costUsd))} estimated`));
    assert.match(html, new RegExp(`<div class="label">Resuming saved</div><div class="value">[^<]*</div><div class="detail">2 model calls · ${escape(formatCount(saved.input + saved.output))} tokens`));

    // A new session on the finished run: /cost says the run's totals, and that it spent nothing live.
    const third = openSession(scratch, ['-c', '--yes', '--no-sandbox'], opts);
    await third.waitFor(/^›\s*$/m);
    assert.equal(await cost(third), `Tokens ${tokensText(total)} (${formatUsd(total.costUsd)} estimated; live this session 0 in, 0 out, $0) · 6 model calls (0 live this session) · ${plural(12, 'step')}`);
    third.type('/exit');
    assert.equal(await exited(third), 0);
    for (const screen of [first.screen(), second.screen(), third.screen(), resumed.stderr]) assertNoStack(screen);
  });
});
