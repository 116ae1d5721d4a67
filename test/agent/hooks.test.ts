// What hooks' exit codes and output decide (agent/hooks.ts), on real processes: exit 2 and JSON
// decisions for each event, Claude Code's tool names in a matcher, a failed hook told as a
// warning and counting for nothing, a timeout that kills the hook's whole process group, and
// output kept to its bound.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hooks, matches, type HookWarning } from '../../src/agent/hooks.js';
import { MAX_HOOK_OUTPUT, type HookDefinition, type HookEvent } from '../../src/tools/hook-command.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// A hook that names no timeout gets 60 s, a safety net: one that should end at once must not be
// judged timed out because a loaded machine was slow to start it (10 s did, once, in a whole run).
function hooksOf(list: Array<{ event: HookEvent; command: string; matcher?: string; timeout?: number }>, warnings: HookWarning[] = []): Hooks {
  const root = scratch.dir('savepoint-hooks-');
  const definitions: HookDefinition[] = list.map((h) => ({ matcher: '', timeout: 60, source: 'test', sandboxed: false, ...h }));
  return new Hooks(definitions, { root, env: process.env, sandbox: () => ({ kind: 'none' }) }, 'run-1', (w) => warnings.push(w));
}

describe('hooks decide', { concurrency: true }, () => {
  test("a matcher is a whole-name expression over savepoint's names and Claude Code's", () => {
    assert.ok(matches('Bash', 'run_bash'));
    assert.ok(matches('Edit|Write', 'write_file'));
    assert.ok(matches('Glob', 'list_files') && matches('LS', 'list_files') && matches('Grep', 'search') && matches('Read', 'read_file'));
    assert.ok(matches('*', 'anything') && matches('', 'anything'));
    assert.ok(!matches('run', 'run_bash'), 'a name matches whole, not a part of it');
    assert.ok(matches('mcp__db__.*', 'mcp__db__query'));
  });

  test('PreToolUse: exit 2 denies with its stderr; JSON permissionDecision decides; deny wins over allow; other exits warn and count for nothing', async () => {
    const warnings: HookWarning[] = [];
    const hooks = hooksOf([
      { event: 'PreToolUse', matcher: 'Bash', command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'` },
      { event: 'PreToolUse', matcher: 'Bash', command: 'grep -q "rm -rf" && { echo "no rm -rf" >&2; exit 2; }; exit 0' },
      { event: 'PreToolUse', matcher: 'Write', command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"a write"}}'` },
      { event: 'PreToolUse', matcher: 'Read', command: 'echo broken >&2; exit 1' },
    ], warnings);
    assert.deepEqual(await hooks.preToolUse('run_bash', { command: 'rm -rf /' }), { decision: 'deny', reason: 'no rm -rf' });
    assert.deepEqual(await hooks.preToolUse('run_bash', { command: 'ls' }), { decision: 'allow' });
    assert.deepEqual(await hooks.preToolUse('write_file', { path: 'a' }), { decision: 'ask', reason: 'a write' });
    assert.deepEqual(await hooks.preToolUse('read_file', { path: 'a' }), {});
    assert.deepEqual(warnings, [{ event: 'PreToolUse', command: 'echo broken >&2; exit 1', message: 'exited 1: broken' }]);
    assert.equal(hooks.has('PreToolUse', 'search'), false);
  });

  test('PostToolUse, UserPromptSubmit and Stop: what reaches the model, what blocks', async () => {
    const hooks = hooksOf([
      { event: 'PostToolUse', command: 'echo "lint: 2 problems" >&2; exit 2' },
      { event: 'PostToolUse', command: `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted"}}'` },
      { event: 'UserPromptSubmit', command: `node -e 'const e = JSON.parse(require("fs").readFileSync(0, "utf8")); if (e.prompt === "no") { console.log(JSON.stringify({ decision: "block", reason: "not that" })); } else console.log("It is " + e.hook_event_name + " in " + e.session_id);'` },
      { event: 'Stop', command: `node -e 'const e = JSON.parse(require("fs").readFileSync(0, "utf8")); if (!e.stop_hook_active) console.log(JSON.stringify({ decision: "block", reason: "tests first" }));'` },
    ]);
    assert.equal(await hooks.postToolUse('run_bash', { command: 'x' }, { output: 'ok', is_error: false }), 'lint: 2 problems\nformatted');
    assert.deepEqual(await hooks.userPromptSubmit('hello'), { context: 'It is UserPromptSubmit in run-1' });
    assert.deepEqual(await hooks.userPromptSubmit('no'), { blocked: 'not that' });
    assert.deepEqual(await hooks.stop(false), { block: 'tests first' });
    assert.equal(await hooks.stop(true), undefined);
  });

  test("a timeout kills the hook's whole process group; output is kept to its bound", async () => {
    const warnings: HookWarning[] = [];
    const pidFile = join(scratch.dir('savepoint-hooks-'), 'child.pid');
    const hooks = hooksOf([
      { event: 'Stop', timeout: 1, command: `sleep 60 & echo $! > ${pidFile}; wait` },
      { event: 'UserPromptSubmit', command: `head -c ${MAX_HOOK_OUTPUT * 2} /dev/zero | tr '\\0' x` },
    ], warnings);
    assert.equal(await hooks.stop(false), undefined);
    assert.match(warnings[0]!.message, /ran past its 1s timeout and was stopped/);
    const context = (await hooks.userPromptSubmit('hi')).context!;
    assert.ok(context.length < MAX_HOOK_OUTPUT + 100 && context.endsWith(`[… cut at ${MAX_HOOK_OUTPUT} bytes]`), `kept to its bound: ${context.length}`);
    // The child the hook started in the background went with its group.
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // Alive: it has a /proc entry that is not a zombie (the reaper may be slow to take it).
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 60_000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(alive(), false, "a process of the hook's group outlived its timeout");
  });
});
