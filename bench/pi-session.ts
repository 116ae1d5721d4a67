// pi's side of the session benchmark (bench/session.ts): a session of pi's own format as long as
// savepoint's built run, then the same two figures measured on it against the same fake server.
//
// pi (@mariozechner/pi-coding-agent) keeps a session as one JSONL file under
// `<PI_CODING_AGENT_DIR>/sessions/--<cwd with / as ->--/<time>_<id>.jsonl`: a `session` header, then
// entries linked by id/parentId (model_change, thinking_level_change, `message` entries holding
// user, assistant and toolResult messages, `compaction` entries with the summary and the first
// entry kept). `pi --continue` opens the newest file of the folder for the working directory and
// builds the conversation from the leaf back to the last compaction. The session is written here
// with pi's own SessionManager (loaded from the bench's cache folder, where bench/peers.ts installs
// pi), so the format is pi's by construction: the same turns as savepoint's run (an assistant
// message calling `read` on notes.txt and its result), compacted after the same turns as
// savepoint's run was, each compaction keeping the last two turns whole as savepoint's does
// (src/agent/compaction.ts, KEEP_TURNS): the conversation sent is then the same turns in each.
//
//   Enter → request   `pi --continue` in tmux, a message typed, tmux's Enter to the request's
//                     arrival at the server
//   resume            `pi -p --continue "<message>"`: spawn to the first request (pi's way to go on
//                     with a session; it has no journal to replay and nothing to kill)
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFakeAnthropic } from '../test/helpers/fake-anthropic.js';
import { arrivalAfter, arrivals, terminal } from './terminal.js';
import { now } from './lib.js';

// The parts of pi's session-manager module used here (pi 0.73.1, dist/core/session-manager.js).
interface PiSessionManager {
  appendModelChange(provider: string, modelId: string): string;
  appendThinkingLevelChange(level: string): string;
  appendMessage(message: Record<string, unknown>): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number): string;
  getSessionFile(): string | undefined;
}
interface PiSessionModule {
  SessionManager: { create(cwd: string, sessionDir: string): PiSessionManager };
  getDefaultSessionDir(cwd: string, agentDir: string): string;
}

/** Where pi keeps its sessions and settings for one benchmark length, and the repository it works in. */
export interface PiPlace {
  cli: string;
  agentDir: string;
  cwd: string;
}

/** What was written: the session file and its entries (the header not counted). */
export interface PiSession {
  file: string;
  entries: number;
}

const USAGE = { input: 2000, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 2020, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * Writes, with pi's own SessionManager, a finished session of `turns` read turns in `place.cwd`,
 * compacted after each turn named in `compactedAfter`: the task, then per turn an assistant message
 * calling `read` on notes.txt and its result, then a final answer.
 */
export async function writePiSession(place: PiPlace, task: string, model: string, notes: string, turns: number, compactedAfter: readonly number[]): Promise<PiSession> {
  const dist = dirname(place.cli);
  const pi = (await import(pathToFileURL(join(dist, 'core', 'session-manager.js')).href)) as PiSessionModule;
  const session = pi.SessionManager.create(place.cwd, pi.getDefaultSessionDir(place.cwd, place.agentDir));
  const stamp = () => Date.now();
  const assistant = (content: unknown[], stopReason: string) => ({ role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model, usage: USAGE, stopReason, timestamp: stamp() });
  let entries = 0;
  const add = (id: string) => {
    entries++;
    return id;
  };
  add(session.appendModelChange('anthropic', model));
  add(session.appendThinkingLevelChange('off'));
  add(session.appendMessage({ role: 'user', content: [{ type: 'text', text: task }], timestamp: stamp() }));
  const compactAfter = new Set(compactedAfter);
  const turnStarts: string[] = [];
  for (let t = 1; t <= turns; t++) {
    const id = `toolu_${t}`;
    turnStarts.push(add(session.appendMessage(assistant([{ type: 'text', text: `Reading ${t}.` }, { type: 'toolCall', id, name: 'read', arguments: { path: 'notes.txt' } }], 'toolUse'))));
    add(session.appendMessage({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: notes }], isError: false, timestamp: stamp() }));
    if (compactAfter.has(t) && turnStarts.length >= 2) {
      add(session.appendCompaction(`Summary: ${t} documents read so far, each the same notes.`, turnStarts.at(-2)!, 30_000));
    }
  }
  add(session.appendMessage(assistant([{ type: 'text', text: 'Done reading.' }], 'stop')));
  const file = session.getSessionFile();
  if (!file) throw new Error('pi wrote no session file');
  return { file, entries };
}

// A fake server for pi: its address in the models.json of pi's config folder (pi ignores ANTHROPIC_BASE_URL).
async function piServer(place: PiPlace, gate: (index: number) => undefined) {
  const fake = await startFakeAnthropic({ turns: () => ({ text: 'Noted.' }), gate });
  writeFileSync(join(place.agentDir, 'models.json'), JSON.stringify({ providers: { anthropic: { baseUrl: fake.url } } }));
  return fake;
}

function piEnv(place: PiPlace): Record<string, string> {
  return { PI_CODING_AGENT_DIR: place.agentDir, PI_OFFLINE: '1', ANTHROPIC_API_KEY: 'bench', NO_COLOR: '1' };
}

/** Enter → request for `count` messages typed into `pi --continue` in tmux; the samples in ms, and the last request's size in bytes. */
export async function piMessageLatencies(place: PiPlace, model: string, count: number): Promise<{ samples: number[]; requestBytes: number }> {
  const arrived = arrivals();
  const fake = await piServer(place, arrived.gate);
  const term = terminal(place.cli, place.cwd, ['--continue', '--provider', 'anthropic', '--model', model], piEnv(place));
  const samples: number[] = [];
  try {
    // Ready: the footer names the model (pi draws it once the session is loaded and the editor takes keys).
    await term.waitFor(new RegExp(model.replace(/[.-]/g, '\\$&')), 600_000, true);
    for (let i = 1; i <= count; i++) {
      const before = arrived.at.length;
      term.text(`message ${i}`);
      await term.waitFor(new RegExp(`message ${i}\\s*$`, 'm'), 30_000, true);
      const enter = now();
      term.enter();
      samples.push((await arrivalAfter(arrived.at, before)) - enter);
      // Done: the answer is on the screen after the message and pi is no longer working.
      await term.waitFor(new RegExp(`message ${i}[\\s\\S]*Noted\\.(?![\\s\\S]*Working\\.\\.\\.)`), 60_000, true);
    }
    return { samples, requestBytes: JSON.stringify(fake.requests.at(-1) ?? {}).length };
  } finally {
    await term.close();
    await fake.close();
  }
}

/** `pi -p --continue <message>`: spawn to its first request's arrival, in ms; and that request's size in bytes. */
export async function piResumeLatency(place: PiPlace, model: string): Promise<{ ms: number; requestBytes: number }> {
  const arrived = arrivals();
  const fake = await piServer(place, arrived.gate);
  try {
    const env = { ...process.env, ...piEnv(place) };
    delete env.ANTHROPIC_BASE_URL;
    const spawned = now();
    const child = spawn(process.execPath, [place.cli, '-p', '--continue', '--provider', 'anthropic', '--model', model, 'one more thing'], { cwd: place.cwd, env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const ms = (await arrivalAfter(arrived.at, 0)) - spawned;
    const code = await exited;
    if (code !== 0) throw new Error(`pi -p --continue exited with ${code}`);
    return { ms, requestBytes: JSON.stringify(fake.requests[0] ?? {}).length };
  } finally {
    await fake.close();
  }
}
