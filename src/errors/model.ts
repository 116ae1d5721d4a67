// The two ways a model can fail a run on purpose: the API call failed after the SDK's own retries
// (ModelError), or a script for the scripted model is unusable (ScriptError). Each message is one
// paragraph for a person, built from `data`; the SDK's error stays reachable as `cause`.
// Tested in test/model/anthropic-errors.test.ts.
import { SavepointError } from './savepoint-error.js';

/** The facts of a failed model call, kept on ModelError.data for tests and --json output. */
export interface ModelErrorData {
  model: string;
  baseURL: string;
  /**
   * What went wrong: an HTTP status, no connection, no answer in time, an error event in the middle
   * of a streamed answer, no credentials at all, or something else the SDK reported.
   */
  kind: 'status' | 'connection' | 'timeout' | 'stream' | 'credentials' | 'retry-wait' | 'other';
  status?: number;
  /** The API's error type (`overloaded_error`, `authentication_error`, ...) and its own words. */
  type?: string;
  apiMessage?: string;
  requestId?: string;
  /** How many times the SDK retried before giving up (0 when the failure is not retryable). */
  retries: number;
  /**
   * For connections: the system's code (`ECONNREFUSED`, `ENOTFOUND`, ...), or the network layer's
   * own words when it gave no code.
   */
  code?: string;
  /** For `retry-wait`: the seconds the API asked to wait (its retry-after), and the cap they passed (--max-retry-wait). */
  waitSeconds?: number;
  maxRetryWait?: number;
}

/** A model call that failed for good: the SDK already retried what was worth retrying. */
export class ModelError extends SavepointError<ModelErrorData> {
  constructor(data: ModelErrorData, options?: { cause?: unknown }) {
    super('EMODEL', describeModelFailure(data), data, options);
  }
}

/** A script for the `script:<file>` model that cannot be used: missing, not JSON, or not a script. */
export class ScriptError extends SavepointError<{ file: string; reason: string }> {
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(
      'ESCRIPT',
      `The model script ${file} ${reason}. A script is a JSON object such as ` +
        `{"model": "scripted-demo", "turns": [{"text": "...", "tools": [{"name": "read_file", "input": {"path": "a.js"}}]}]}; ` +
        `a turn may also have "delayMs", "usage" and "stopReason", and an unknown key is refused. ` +
        `The format is described in docs/scripted-models.md (in the savepoint package and its repository).`,
      { file, reason },
      options,
    );
  }
}

/** The conversation does not fit the model's context window even after compacting it. */
export class ContextWindowError extends SavepointError<{ run: string; contextWindow: number; apiMessage: string }> {
  constructor(run: string, contextWindow: number, apiMessage: string) {
    super(
      'ECONTEXT',
      `Run ${run} no longer fits the model's context window (${contextWindow.toLocaleString('en-US')} tokens) even after ` +
        `compacting its conversation${apiMessage ? `: the API said "${apiMessage}"` : ''}. The last turns kept whole are ` +
        `too large on their own (a huge tool result?). Every finished step is kept: fork the run before the step that ` +
        `made them ("savepoint fork ${run} --at <step>") and go on from there, or use a model with a larger window.`,
      { run, contextWindow, apiMessage },
    );
  }
}

/**
 * A compaction's summary call answered twice with nothing usable (no text, or tool calls): the
 * conversation is not replaced by it, every turn is kept, and the run stops here.
 */
export class UnusableSummaryError extends SavepointError<{ run: string; answers: string[] }> {
  constructor(run: string, answers: string[]) {
    super(
      'ESUMMARY',
      `Run ${run} stopped before compacting its conversation: the model was asked twice for a summary of it and ` +
        `answered with ${answers.join(', then ')}, not a summary. Nothing was replaced: every turn is kept as it was, ` +
        `and nothing of the compaction is recorded. Run the same command again to ask once more, try another model ` +
        `(--model), or go on without compacting (--no-compact).`,
      { run, answers },
    );
  }
}

const RESUME_HINT = 'run the same command again later: the steps already finished are replayed from the journal, not redone';

function describeModelFailure(data: ModelErrorData): string {
  const { model, baseURL, retries } = data;
  const after = retries > 0 ? ` (after ${retries} ${retries === 1 ? 'retry' : 'retries'})` : '';
  const said = data.apiMessage ? `: "${data.apiMessage}"` : '';
  const id = data.requestId ? ` Request id: ${data.requestId}.` : '';
  switch (data.kind) {
    case 'connection':
      return (
        `Could not connect to the model API at ${baseURL}${data.code ? ` (${data.code})` : ''}${after}. ` +
        `Check that the address is right and the server is up: it comes from ANTHROPIC_BASE_URL when that ` +
        `is set, and is https://api.anthropic.com otherwise. Then ${RESUME_HINT}.`
      );
    case 'timeout':
      return `The model API at ${baseURL} did not answer in time${after} for model ${model}. Check the network, then ${RESUME_HINT}.`;
    case 'stream':
      return (
        `The model API at ${baseURL} broke off its answer with an error${data.type ? ` (${data.type})` : ''}${said}. ` +
        `${data.type === 'overloaded_error' ? 'The API is overloaded right now; ' : ''}${capitalize(RESUME_HINT)}.${id}`
      );
    case 'credentials':
      return (
        `There is no credential for the model API at ${baseURL}: set ANTHROPIC_API_KEY (keys are made at ` +
        `https://console.anthropic.com/settings/keys) or ANTHROPIC_AUTH_TOKEN, or use a scripted model ` +
        `(--model script:<file>); "savepoint demo" runs without a key.`
      );
    case 'retry-wait':
      return (
        `The model API at ${baseURL} answered ${data.status}${data.type ? ` ${data.type}` : ''} and asked savepoint to wait ` +
        `${data.waitSeconds} s before trying again, longer than --max-retry-wait allows (${data.maxRetryWait} s). Nothing ` +
        `was lost: ${RESUME_HINT}, or give a larger --max-retry-wait to wait it out.${id}`
      );
    case 'other':
      return `The call to model ${model} at ${baseURL} failed${said}. Once the cause is fixed, run the same command again: the steps already finished are replayed from the journal, not redone.`;
    case 'status':
      return `The model API at ${baseURL} answered ${data.status}${data.type ? ` ${data.type}` : ''}${said}${after}. ${meaning(data)}${id}`;
  }
}

// What a status means for the person at the terminal, and what to do about it.
function meaning({ status, type, model, baseURL }: ModelErrorData): string {
  if (status === 529 || type === 'overloaded_error') return `Anthropic's API is overloaded right now; ${RESUME_HINT}.`;
  switch (status) {
    case 400:
      return (
        `The API refused the request as invalid: the conversation may have outgrown the model's context ` +
        `window, or savepoint sent something the API does not accept (worth reporting as a bug).`
      );
    case 401:
      return (
        `The API key or token was refused. Set a valid ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); keys are ` +
        `made at https://console.anthropic.com/settings/keys. "savepoint demo" runs without one.`
      );
    case 402:
      return `The account behind the key has no credit left for the API; add some in the Anthropic console.`;
    case 403:
      return `The key is valid but not allowed to make this call with model ${model}: check its workspace and permissions.`;
    case 404:
      return `${baseURL} has no model "${model}" (or no Messages API): check --model, and ANTHROPIC_BASE_URL if it is set.`;
    case 413:
      return `The request is larger than the API accepts: the conversation has grown too big.`;
    case 429:
      return `The rate limit of this key was reached; ${RESUME_HINT}.`;
  }
  if (status !== undefined && status >= 500) return `The API had an internal error; ${RESUME_HINT}.`;
  return `The model call did not succeed; ${RESUME_HINT}.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
