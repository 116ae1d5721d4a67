// Claude Code's side of the session benchmark (bench/session.ts): a session of Claude Code's own
// format as long as savepoint's built run, then the same two figures measured on it against the same
// fake server.
//
// Claude Code keeps a session as one JSONL file, `~/.claude/projects/<cwd, non-alphanumerics as
// ->/<session id>.jsonl`: records linked by uuid/parentUuid (`user` records holding prompts and
// tool results, `assistant` records holding one content block each, `attachment` records with the
// context it adds, `system` records such as a compaction's `compact_boundary`, whose
// compactMetadata.preservedSegment names the messages kept after it, followed by the summary as a
// `user` record with isCompactSummary), among bookkeeping records (last-prompt, queue-operation,
// cost-state, ...). `claude --resume <id>` reads the file and builds the conversation from the leaf
// back through the last compaction.
//
// The long session is made from a real one: Claude Code itself first runs the task for three read
// turns and a final answer against the fake server (`claude -p`), and its file gives the records: the
// start (prompt and attachments) and the first turn as written, the second turn's records as the
// pattern of every further turn (fresh uuids, the tool call's id and the turn's number changed), and
// the final answer. Compactions go after the same turns as savepoint's run compacted, each keeping the
// last two turns whole, as savepoint's does, written as the boundary and summary records Claude Code
// writes for `/compact` (studied in a real session). The api-request and api-request-blob records
// Claude Code 2.1 also writes per request (its content-hashed copy of each request's wire form) are
// left out everywhere: their hashes cannot be made for records it did not send; a session without
// them is what an older Claude Code wrote, and it resumes from the conversation records.
//
//   Enter → request   `claude --resume <id>` in tmux, a message typed, tmux's Enter to the arrival at
//                     the server of the request that carries it
//   resume            `claude -p --resume <id> <message>` killed with SIGKILL while its request is at
//                     the server, then `claude -p --resume <id> <message>` again: spawn to its first
//                     request's arrival
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type MessagesBody } from '../test/helpers/fake-anthropic.js';
import type { ScriptTurn } from '../src/model/script-file.js';
import { claudeEnv, claudeProcessEnv, claudeProjectDir, type ClaudePlace } from './claude-code.js';
import { terminalCommand } from './terminal.js';
import { now } from './lib.js';

/** What was written: the session's id, its file and its records. */
export interface ClaudeSession {
  id: string;
  file: string;
  records: number;
}

type SessionRecord = Record<string, unknown> & { type: string; uuid?: string; parentUuid?: string | null };

// Records Claude Code writes per request as a content-hashed copy of the wire form (see the top).
const WIRE_COPIES = new Set(['api-request', 'api-request-blob', 'api-request-shape']);

const isToolResult = (r: SessionRecord) =>
  r.type === 'user' && Array.isArray((r.message as { content?: unknown })?.content) && ((r.message as { content: Array<{ type?: string }> }).content).some((b) => b.type === 'tool_result');

// `claude -p` to its end; its exit code and output's tail.
function runPrint(place: ClaudePlace, url: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(place.cli, ['-p', ...args], { cwd: place.cwd, env: claudeProcessEnv(place, url), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Writes a finished Claude Code session of `turns` read turns in `place.cwd` (notes.txt there),
 * compacted after each turn named in `compactedAfter`, from the records of a short real session (see
 * the top of this file).
 */
export async function writeClaudeSession(place: ClaudePlace, task: string, model: string, turns: number, compactedAfter: readonly number[]): Promise<ClaudeSession> {
  const read = { name: 'Read', input: { file_path: join(place.cwd, 'notes.txt') } };
  const script: ScriptTurn[] = [1, 2, 3].map((t) => ({ text: `Reading ${t}.`, tools: [read] }));
  script.push({ text: 'Done reading.' });
  const fake = await startFakeAnthropic({ turns: script });
  let result;
  try {
    result = await runPrint(place, fake.url, ['--dangerously-skip-permissions', '--model', model, task]);
  } finally {
    await fake.close();
  }
  const dir = claudeProjectDir(place.home, place.cwd);
  const names = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
  if (result.code !== 0 || fake.requests.length !== 4 || names.length !== 1) {
    throw new Error(`claude -p wrote no usable session: exit ${result.code}, ${fake.requests.length} requests (expected 4), ${names.length} session files\n${result.output}`);
  }
  const file = join(dir, names[0]!);
  const id = names[0]!.slice(0, -'.jsonl'.length);
  const real = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as SessionRecord).filter((r) => !WIRE_COPIES.has(r.type));
  const results = real.flatMap((r, i) => (isToolResult(r) ? [i] : []));
  if (results.length !== 3) throw new Error(`the real session has ${results.length} tool results, expected 3`);
  // Turns 1 and 2 are kept as written (the first requests add one-off records, a prompt snapshot among them); turn 3 is the pattern.
  const [firstResult, secondResult, thirdResult] = results as [number, number, number];
  const chainOf = (records: SessionRecord[]) => records.filter((r) => typeof r.uuid === 'string');

  // The start and turns 1-2 as written; turn 3's records as the pattern; the final answer.
  const start = real.slice(0, secondResult + 1);
  const pattern = real.slice(secondResult + 1, thirdResult + 1);
  const end = real.slice(thirdResult + 1);
  const patternChain = chainOf(pattern);
  const patternParent = patternChain[0]!.parentUuid as string;
  const patternLeaf = patternChain.at(-1)!.uuid!;
  const patternJson = pattern.map((r) => JSON.stringify(r));
  const patternUuids = patternChain.map((r) => r.uuid!);
  const blocks = patternChain.flatMap((r) => (r.type === 'assistant' ? (r.message as { content: Array<{ type: string; id?: string }> }).content : []));
  const toolId = blocks.find((b) => b.type === 'tool_use')?.id;
  const messageId = (patternChain.find((r) => r.type === 'assistant')?.message as { id?: string } | undefined)?.id;
  if (!toolId || !messageId) throw new Error('the real session\'s third turn has no tool call');

  const lines: string[] = start.map((r) => JSON.stringify(r));
  let leaf = chainOf(start).at(-1)!.uuid!;
  // The chain uuids of the last two turns written (what a compaction keeps whole).
  const turnUuids: string[][] = [
    chainOf(start.slice(start.findIndex((r) => r.type === 'assistant'), firstResult + 1)).map((r) => r.uuid!),
    chainOf(start.slice(firstResult + 1)).map((r) => r.uuid!),
  ];
  const compactAfter = new Set(compactedAfter);
  const stamp = new Date().toISOString();
  const compact = (t: number) => {
    const kept = turnUuids.slice(-2).flat();
    const boundary = randomUUID();
    const summary = randomUUID();
    const common = { isSidechain: false, userType: 'external', entrypoint: 'sdk-cli', cwd: place.cwd, sessionId: id, version: real.find((r) => r.version)?.version, gitBranch: 'HEAD' };
    lines.push(
      JSON.stringify({
        parentUuid: null,
        logicalParentUuid: leaf,
        ...common,
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        isMeta: false,
        timestamp: stamp,
        uuid: boundary,
        level: 'info',
        compactMetadata: { trigger: 'auto', preTokens: 30_000, preservedSegment: { headUuid: kept[0], anchorUuid: summary, tailUuid: leaf }, preservedMessages: { anchorUuid: summary, uuids: kept } },
      }),
      JSON.stringify({
        parentUuid: boundary,
        ...common,
        type: 'user',
        message: {
          role: 'user',
          content: `This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nSummary: ${t} documents read so far, each the same notes.\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ${file}\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with "I'll continue" or similar. Pick up the last task as if the break never happened.\n\nThe messages after this summary are the most recent messages from before compaction, kept verbatim. The summary was written without seeing them, so something it says has not happened yet may already have happened in them.`,
        },
        isVisibleInTranscriptOnly: true,
        isCompactSummary: true,
        uuid: summary,
        timestamp: stamp,
      }),
    );
  };
  if (compactAfter.has(2)) compact(2);
  for (let t = 3; t <= turns; t++) {
    const fresh = new Map(patternUuids.map((uuid) => [uuid, randomUUID()]));
    for (const json of patternJson) {
      let line = json;
      for (const [old, uuid] of fresh) line = line.replaceAll(old, uuid);
      line = line.replaceAll(patternParent, leaf).replaceAll(toolId, `toolu_bench_${t}`).replaceAll(messageId, `msg_bench_${t}`).replaceAll('Reading 3.', `Reading ${t}.`);
      lines.push(line);
    }
    leaf = fresh.get(patternLeaf)!;
    turnUuids.push([...fresh.values()]);
    if (turnUuids.length > 2) turnUuids.shift();
    if (compactAfter.has(t)) compact(t);
  }
  for (const record of end) lines.push(JSON.stringify(record).replaceAll(patternLeaf, leaf));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { id, file, records: lines.length };
}

// A fake server answering 'Noted.' that notes when each request arrives and the text of its last message.
async function notingServer(hold?: (index: number) => Promise<void> | undefined) {
  const seen: Array<{ at: number; last: string }> = [];
  const fake = await startFakeAnthropic({
    turns: () => ({ text: 'Noted.' }),
    gate: (index: number, request: MessagesBody) => {
      seen.push({ at: now(), last: JSON.stringify(request.messages.at(-1) ?? {}) });
      return hold?.(index);
    },
  });
  return { fake, seen };
}

// Resolves with the arrival of the first request after the first `after` that carries `text` in its last message.
async function arrivalWith(seen: ReadonlyArray<{ at: number; last: string }>, after: number, text: string, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = seen.slice(after).find((s) => s.last.includes(text));
    if (hit) return hit.at;
    if (Date.now() > deadline) throw new Error(`no request carrying "${text}" at the server within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Enter → request for `count` messages typed into `claude --resume <id>` in tmux; the samples in ms, and the last request's size in bytes. */
export async function claudeMessageLatencies(place: ClaudePlace, session: ClaudeSession, model: string, count: number): Promise<{ samples: number[]; requestBytes: number }> {
  const { fake, seen } = await notingServer();
  const term = terminalCommand([place.cli, '--resume', session.id, '--model', model], place.cwd, claudeEnv(place, fake.url));
  const samples: number[] = [];
  try {
    // Ready: the session's last answer drawn and the prompt empty.
    await term.waitFor(/Done reading\.[\s\S]*^❯\s*$/m, 600_000, true);
    for (let i = 1; i <= count; i++) {
      const before = seen.length;
      term.text(`message ${i}`);
      await term.waitFor(new RegExp(`^❯\\s*message ${i}\\s*$`, 'm'), 30_000, true);
      const enter = now();
      term.enter();
      samples.push((await arrivalWith(seen, before, `message ${i}`)) - enter);
      // Done: the answer is on the screen after the message and Claude Code no longer offers to interrupt.
      await term.waitFor(new RegExp(`message ${i}[\\s\\S]*Noted\\.(?![\\s\\S]*esc to interrupt)`), 60_000, true);
    }
    return { samples, requestBytes: JSON.stringify(fake.requests.at(-1) ?? {}).length };
  } finally {
    await term.close();
    await fake.close();
  }
}

/** `claude -p --resume <id>` killed with SIGKILL at its request, then started again: spawn to its first request's arrival, in ms; and that request's size in bytes. */
export async function claudeResumeLatency(place: ClaudePlace, session: ClaudeSession, model: string): Promise<{ ms: number; requestBytes: number }> {
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const { fake, seen } = await notingServer(() => {
    if (!first) return undefined;
    first = false;
    return held; // the killed process's request: never answered
  });
  try {
    const env = claudeProcessEnv(place, fake.url);
    const killed = spawn(place.cli, ['-p', '--resume', session.id, '--model', model, 'one more thing'], { cwd: place.cwd, env, stdio: 'ignore' });
    await arrivalWith(seen, 0, 'one more thing');
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    const before = seen.length;
    const spawned = now();
    const resumed = spawn(place.cli, ['-p', '--resume', session.id, '--model', model, 'go on'], { cwd: place.cwd, env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => resumed.once('exit', resolve));
    const ms = (await arrivalWith(seen, before, 'go on')) - spawned;
    const code = await exited;
    if (code !== 0) throw new Error(`claude -p --resume exited with ${code}`);
    return { ms, requestBytes: JSON.stringify(fake.requests.at(-1) ?? {}).length };
  } finally {
    release?.();
    await fake.close();
  }
}
