// `npm run bench -- subagents`: three subagents of three model turns each, started by one answer
// (three task calls), against the fake Anthropic server of the tests with every subagent turn
// delayed as a model's would be. The row is the wall time from the first task step's start to the
// last one's result, against the sum of the subagents' model turns as their steps recorded them:
// run one after another the wall time would be at least that sum; run at once, about a third.
//
//   npm run bench -- subagents
//   node --import tsx bench/subagents.ts    (this group alone, after npm run build)
import { startFakeAnthropic, type MessagesBody } from '../test/helpers/fake-anthropic.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { turnIndex } from '../src/model/script-turn.js';
import type { SessionEvent } from '../src/session/types.js';
import { createBenchRepo, runAlone, type BenchContext, type BenchGroup, type Row } from './lib.js';

// How long each subagent model turn takes at the fake server.
const TURN_MS = 1000;
const SUBAGENTS = 3;
// Three model turns each: two that call a tool, then the answer.
const SUBAGENT_TURNS: ScriptTurn[] = [
  { tools: [{ name: 'list_files', input: {} }], delayMs: TURN_MS },
  { tools: [{ name: 'read_file', input: { path: 'README.md' } }], delayMs: TURN_MS },
  { text: 'Done looking.', delayMs: TURN_MS },
];
const PARENT_TURNS: ScriptTurn[] = [
  { tools: Array.from({ length: SUBAGENTS }, (_, i) => ({ name: 'task', input: { description: `look ${i + 1}`, prompt: `SUBAGENT ${i + 1}: look around the repository and say so.` } })) },
  { text: 'All three looked.' },
];

function turnFor(body: MessagesBody): ScriptTurn {
  const first = body.messages[0]?.content;
  const text = typeof first === 'string' ? first : JSON.stringify(first);
  const turns = text.includes('SUBAGENT ') ? SUBAGENT_TURNS : PARENT_TURNS;
  return turns[turnIndex(body.messages)] ?? { text: 'out of turns' };
}

interface Library {
  startRun(options: Record<string, unknown>): Promise<{ status: string; final: string }>;
}

async function run(context: BenchContext): Promise<Row[]> {
  const lib = (await import(new URL('../dist/index.js', import.meta.url).href)) as Library;
  const fake = await startFakeAnthropic({ turns: turnFor });
  const repo = createBenchRepo(context, 'subagents');
  const events: Array<{ at: number; event: SessionEvent }> = [];
  // The SDK reads the server and key from the environment, as for the CLI.
  const saved = { url: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
  process.env.ANTHROPIC_BASE_URL = fake.url;
  process.env.ANTHROPIC_API_KEY = 'bench-key';
  try {
    context.log(`${SUBAGENTS} subagents of 3 model turns (${TURN_MS} ms each at the server) from one answer`);
    const outcome = await lib.startRun({
      dir: repo.root,
      task: 'look around with three helpers',
      model: 'claude-sonnet-4-5',
      sandbox: { use: false },
      onEvent: (event: SessionEvent) => events.push({ at: performance.now(), event }),
    });
    if (outcome.status !== 'finished') throw new Error(`the run ended ${outcome.status}`);
  } finally {
    for (const [name, value] of [['ANTHROPIC_BASE_URL', saved.url], ['ANTHROPIC_API_KEY', saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await fake.close();
    repo.remove();
  }
  const taskStarts = events.filter(({ event }) => event.type === 'started' && event.kind === 'task').map(({ at }) => at);
  const taskEnds = events.filter(({ event }) => event.type === 'recorded' && event.kind === 'task').map(({ at }) => at);
  const turns = events.flatMap(({ event }) => (event.type === 'subagent' && event.event.type === 'recorded' && event.event.kind === 'model' ? [event.event.durationMs] : []));
  if (taskStarts.length !== SUBAGENTS || taskEnds.length !== SUBAGENTS || turns.length !== SUBAGENTS * 3) throw new Error(`expected ${SUBAGENTS} task steps and ${SUBAGENTS * 3} subagent turns, got ${taskStarts.length}, ${taskEnds.length}, ${turns.length}`);
  const wall = Math.max(...taskEnds) - Math.min(...taskStarts);
  const sum = turns.reduce((total, ms) => total + ms, 0);
  const ratio = wall / sum;
  return [
    {
      what: `${SUBAGENTS} subagents x 3 model turns: wall time / sum of their turns`,
      n: SUBAGENTS * 3,
      total: wall,
      value: `${Math.round(wall)} ms / ${Math.round(sum)} ms = ${ratio.toFixed(2)}x`,
      // All three at once on a quiet machine: about a third plus the steps' own time; one after another: ≥ 1x.
      target: '≤ 0.67x (one after another: ≥ 1x)',
      ok: ratio <= 0.67,
    },
  ];
}

export const subagentsGroup: BenchGroup = {
  name: 'subagents',
  description: 'three subagents of three model turns from one answer: wall time against the sum of their turns',
  run,
};

await runAlone(import.meta.url, run);
