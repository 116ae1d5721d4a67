// Hooks in Claude Code's format (docs/settings.md, Hooks): which hooks an event runs, the event's
// JSON they are given, and what their exit codes and output decide. Exit 0 goes on (stdout may be
// JSON that decides); exit 2 blocks, its stderr going to the model (or, for a prompt, the person);
// any other exit is a warning to the person, and the run goes on. The loop and the tool call put
// each hook's outcome into the step it belongs to (see loop.ts, tool-call.ts): replay hands the
// outcome back from the journal and never runs a hook again.
import { runHookCommand, type HookDefinition, type HookEvent, type HookPlace, type HookRun } from '../tools/hook-command.js';

/** Claude Code's names for savepoint's tools, so that a matcher written for Claude Code (`Bash`, `Edit|Write`) matches here too. */
export const CLAUDE_CODE_HOOK_NAMES: Readonly<Record<string, readonly string[]>> = {
  run_bash: ['Bash'],
  read_file: ['Read'],
  edit_file: ['Edit', 'MultiEdit'],
  write_file: ['Write'],
  search: ['Grep'],
  list_files: ['Glob', 'LS'],
  web_fetch: ['WebFetch'],
};

/** What a hook's trouble tells the person: a hook that failed (an exit other than 0 and 2, a timeout, no start), never the model. */
export interface HookWarning {
  event: HookEvent;
  command: string;
  message: string;
}

/** What PreToolUse hooks decided about a call: deny (with the reason for the model), ask the person, allow without asking, or nothing. */
export interface PreToolDecision {
  decision?: 'allow' | 'deny' | 'ask';
  reason?: string;
}

/** Kept beside a tool's result, for the model: what PostToolUse hooks said (exit 2's stderr, a block's reason, additionalContext). */
export type PostToolFeedback = string | undefined;

/** A prompt's hooks' outcome, recorded with its step: blocked (with what the person is told), or context to add for the model. */
export interface PromptHookOutcome {
  blocked?: string;
  context?: string;
}

/** A Stop hook's outcome, recorded with the final answer's step: the model goes on, with this as its instruction. */
export interface StopHookOutcome {
  block: string;
}

/** The hooks in force for a run, and where they run. */
export class Hooks {
  private readonly hooks: readonly HookDefinition[];
  private readonly place: HookPlace;
  private readonly run: string;
  private readonly onWarning: (warning: HookWarning) => void;

  constructor(hooks: readonly HookDefinition[], place: HookPlace, run: string, onWarning: (warning: HookWarning) => void = () => {}) {
    this.hooks = hooks;
    this.place = place;
    this.run = run;
    this.onWarning = onWarning;
  }

  /** Whether any hook of `event` is in force (for a tool event, that matches `tool`). */
  has(event: HookEvent, tool?: string): boolean {
    return this.matching(event, tool).length > 0;
  }

  /** PreToolUse: any deny wins (exit 2, or permissionDecision "deny" / decision "block"), then ask, then allow. */
  async preToolUse(tool: string, input: unknown): Promise<PreToolDecision> {
    const runs = await this.runAll('PreToolUse', tool, { tool_name: tool, tool_input: input });
    const decisions: PreToolDecision[] = runs.map(({ run }) => {
      if (run.code === 2) return { decision: 'deny', reason: run.stderr.trim() || 'blocked by a PreToolUse hook' };
      const json = run.code === 0 ? jsonOf(run.stdout) : undefined;
      const specific = objectOf(json?.hookSpecificOutput);
      const said =
        specific?.permissionDecision ?? (json?.decision === 'block' ? 'deny' : json?.decision === 'approve' ? 'allow' : undefined);
      const reason = textOf(specific?.permissionDecisionReason) ?? textOf(json?.reason);
      if (said === 'deny' || said === 'ask' || said === 'allow') return { decision: said, ...(reason ? { reason } : {}) };
      return {};
    });
    for (const decision of ['deny', 'ask', 'allow'] as const) {
      const found = decisions.find((d) => d.decision === decision);
      if (found) return found;
    }
    return {};
  }

  /** PostToolUse: what the model is told beside the result (the call has run: nothing is undone). */
  async postToolUse(tool: string, input: unknown, response: unknown): Promise<PostToolFeedback> {
    const runs = await this.runAll('PostToolUse', tool, { tool_name: tool, tool_input: input, tool_response: response });
    const said: string[] = [];
    for (const { run } of runs) {
      if (run.code === 2) said.push(run.stderr.trim());
      const json = run.code === 0 ? jsonOf(run.stdout) : undefined;
      if (json?.decision === 'block') said.push(textOf(json.reason) ?? 'blocked by a PostToolUse hook');
      const context = textOf(objectOf(json?.hookSpecificOutput)?.additionalContext);
      if (context) said.push(context);
    }
    const text = said.filter(Boolean).join('\n');
    return text || undefined;
  }

  /** UserPromptSubmit: blocked (exit 2's stderr, or decision "block" with its reason, for the person), or context for the model (plain stdout or additionalContext). */
  async userPromptSubmit(prompt: string): Promise<PromptHookOutcome> {
    const runs = await this.runAll('UserPromptSubmit', undefined, { prompt });
    const context: string[] = [];
    for (const { run } of runs) {
      if (run.code === 2) return { blocked: run.stderr.trim() || 'blocked by a UserPromptSubmit hook' };
      if (run.code !== 0) continue;
      const json = jsonOf(run.stdout);
      if (json?.decision === 'block') return { blocked: textOf(json.reason) ?? 'blocked by a UserPromptSubmit hook' };
      const added = json ? textOf(objectOf(json.hookSpecificOutput)?.additionalContext) : run.stdout.trim();
      if (added) context.push(added);
    }
    return context.length ? { context: context.join('\n') } : {};
  }

  /** Stop: the model goes on with the returned instruction (exit 2's stderr, or decision "block" with its reason), or undefined to stop. */
  async stop(active: boolean): Promise<StopHookOutcome | undefined> {
    const runs = await this.runAll('Stop', undefined, { stop_hook_active: active });
    for (const { run } of runs) {
      if (run.code === 2) return { block: run.stderr.trim() || 'A Stop hook asked you to go on.' };
      const json = run.code === 0 ? jsonOf(run.stdout) : undefined;
      if (json?.decision === 'block') return { block: textOf(json.reason) ?? 'A Stop hook asked you to go on.' };
    }
    return undefined;
  }

  private matching(event: HookEvent, tool: string | undefined): HookDefinition[] {
    return this.hooks.filter((hook) => hook.event === event && (tool === undefined || matches(hook.matcher, tool)));
  }

  // Runs every hook of the event that matches, side by side as Claude Code does, in the order
  // written; a failed one is told to the person and counts for nothing.
  private async runAll(
    event: HookEvent,
    tool: string | undefined,
    fields: Record<string, unknown>,
  ): Promise<Array<{ hook: HookDefinition; run: HookRun }>> {
    const hooks = this.matching(event, tool);
    if (!hooks.length) return [];
    const input = { session_id: this.run, transcript_path: null, cwd: this.place.root, hook_event_name: event, ...fields };
    const runs = await Promise.all(hooks.map(async (hook) => ({ hook, run: await runHookCommand(hook, input, this.place) })));
    for (const { hook, run } of runs) {
      const problem = run.failed
        ? `could not start: ${run.failed}`
        : run.timedOut
          ? `ran past its ${hook.timeout}s timeout and was stopped`
          : run.code !== 0 && run.code !== 2
            ? `exited ${run.code ?? 'on a signal'}${run.stderr.trim() ? `: ${run.stderr.trim()}` : ''}`
            : undefined;
      // A hook stopped with the run (Ctrl-C) did not fail: the stop is said already.
      if (problem && !this.place.signal?.aborted) this.onWarning({ event, command: hook.command, message: problem });
    }
    return runs.filter(({ run }) => !run.failed && !run.timedOut);
  }
}

/** Whether a hook's matcher covers `tool`: '' or `*` covers every tool; else a whole-name regular expression (`Edit|Write`), tried on the tool's name and Claude Code's names for it. */
export function matches(matcher: string, tool: string): boolean {
  if (matcher === '' || matcher === '*') return true;
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${matcher})$`);
  } catch {
    return false; // checked when the settings were read
  }
  return [tool, ...(CLAUDE_CODE_HOOK_NAMES[tool] ?? [])].some((name) => pattern.test(name));
}

function jsonOf(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return objectOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function objectOf(value: unknown): Record<string, any> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}
