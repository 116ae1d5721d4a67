// Trust on the terminal (SPEC, Trust; docs/trust.md): before anything runs in a folder whose own
// files would widen what runs (allow rules, a defaultMode, sandbox lifts, MCP servers, hooks), the
// person is shown what those files would do and asked once whether to trust them; then each MCP
// server the repository names and the person has not approved is asked about on its own. The
// answers go to the trust store in the person's config folder. Without a terminal nothing is asked:
// what was left out is said in one line (leftOutLine), and `--trust` trusts.
import type { Writable } from 'node:stream';
import { InterruptedError } from '../../errors/index.js';
import { showControls } from '../../format/text.js';
import {
  recordServerApprovals,
  recordTrust,
  type HookSettings,
  type LeftOut,
  type RepositoryServer,
  type Settings,
} from '../../settings/index.js';
import type { Style } from '../terminal/style.js';
import { ask } from './approval.js';

/** What the person declined in this process (a session asks once, not at every turn): folder digests and server digests. */
export type TrustDeclined = Set<string>;

/** How askTrust asks. */
export interface TrustQuestionOptions {
  out: Writable;
  style: Style;
  /** Before a question reads the terminal: keys typed ahead of it are taken off it (they do not answer it). */
  beforeQuestion?: () => Promise<void>;
  /** What was declined earlier in this process: not asked again while the files stay the same. */
  declined?: TrustDeclined;
  env?: NodeJS.ProcessEnv;
}

/** Whether the terminal should be asked about `settings`: the folder is untrusted and brings something left out, or a repository server waits for approval. */
export function trustQuestionsFor(
  settings: Settings,
  declined: TrustDeclined = new Set(),
): { folder: boolean; servers: RepositoryServer[] } {
  const { trust } = settings;
  const folder = trust.state === 'untrusted' && settings.leftOut.some((left) => left.why === 'untrusted') && !declined.has(trust.digest!);
  const servers =
    trust.state === 'untrusted' && !folder
      ? []
      : settings.repositoryServers.filter((server) => !server.approved && !declined.has(server.digest));
  return { folder, servers };
}

/**
 * Asks the trust question and the MCP servers' questions that `settings` calls for, recording the
 * answers; resolves with whether anything was recorded (the caller reads the settings again).
 * Ctrl-C rejects with InterruptedError: nothing has run.
 */
export async function askTrust(settings: Settings, root: string, options: TrustQuestionOptions): Promise<boolean> {
  const { out, style } = options;
  const declined = options.declined ?? new Set<string>();
  const { folder, servers } = trustQuestionsFor(settings, declined);
  let recorded = false;
  let trusted = settings.trust.state !== 'untrusted';
  if (folder) {
    await options.beforeQuestion?.();
    out.write(`${describeFolder(settings, root, style)}\n`);
    const answer = (
      await ask('  Trust this folder? [y]es, trust it / [n]o, go on without what it brings (Ctrl-C stops): ', {
        output: out as NodeJS.WritableStream,
      })
    )
      .trim()
      .toLowerCase();
    if (answer === 'y' || answer === 'yes') {
      recordTrust(root, settings.trust.digest!, options.env);
      recorded = trusted = true;
      out.write(`    ${style.dim('Trusted: remembered in your config for these files as they are now (a change to them asks again).')}\n`);
    } else {
      declined.add(settings.trust.digest!);
      out.write(`    ${style.dim('Not trusted: going on without what it brings.')}\n`);
    }
  }
  if (!trusted) return recorded;
  for (const server of folder ? settings.repositoryServers.filter((s) => !s.approved) : servers) {
    await options.beforeQuestion?.();
    if (!folder)
      out.write(
        `  ${style.yellow(`This repository names an MCP server you have not approved (${showControls(relativeSource(server.source, root))}):`)}\n    ${describeRepositoryServer(server)}\n`,
      );
    const answer = (
      await ask(`  Start MCP server "${showControls(server.name)}" in this folder? [y]es, approve it / [n]o: `, {
        output: out as NodeJS.WritableStream,
      })
    )
      .trim()
      .toLowerCase();
    if (answer === 'y' || answer === 'yes') {
      recordServerApprovals(root, { [server.name]: server.digest }, options.env);
      recorded = true;
    } else declined.add(server.digest);
  }
  return recorded;
}

/** Runs askTrust; Ctrl-C at it is told and turned into exit code 130 (undefined: go on). */
export async function askTrustOrStop(
  settings: Settings,
  root: string,
  options: TrustQuestionOptions,
): Promise<{ recorded: boolean } | { exitCode: 130 }> {
  try {
    return { recorded: await askTrust(settings, root, options) };
  } catch (error) {
    if (!(error instanceof InterruptedError)) throw error;
    process.stderr.write('Stopped at the trust question: nothing ran.\n');
    return { exitCode: 130 };
  }
}

/** The one line that says what the repository's files hold that was left out, and how to have it; undefined when nothing was. */
export function leftOutLine(settings: Settings, root: string | undefined): string | undefined {
  const untrusted = settings.leftOut.filter((left) => left.why === 'untrusted');
  const unapproved = settings.leftOut.filter((left) => left.why === 'unapproved');
  const parts: string[] = [];
  if (untrusted.length)
    parts.push(
      `this folder is not trusted, so its ${listed(untrusted, root)} ${untrusted.length === 1 ? 'was' : 'were'} left out (its deny rules apply): run with --trust, or on a terminal, to trust it`,
    );
  if (unapproved.length) {
    const names = unapproved.map((left) => left.server!);
    parts.push(
      `${unapproved.length === 1 ? 'the MCP server' : 'the MCP servers'} ${names.map((n) => `"${n}"`).join(', ')} of this repository ${unapproved.length === 1 ? 'is' : 'are'} not approved and will not start: savepoint mcp approve ${names.join(' ')}`,
    );
  }
  return parts.length ? showControls(`Left out: ${parts.join('; ')} (docs/trust.md).`) : undefined;
}

// "allow rule "run_bash" (.savepoint/settings.json), MCP server "db" (.mcp.json)", shortened past a few.
function listed(items: LeftOut[], root: string | undefined): string {
  const shown = items.slice(0, 6).map((left) => `${left.what} (${relativeSource(left.source, root)})`);
  return `${shown.join(', ')}${items.length > 6 ? ` and ${items.length - 6} more` : ''}`;
}

// What the folder's files would do, for the trust question: file by file, everything left out, each
// MCP server with its whole command line or URL and the names of the variables it would be given.
function describeFolder(settings: Settings, root: string, style: Style): string {
  const lines = [
    style.yellow(
      `  This folder's own files would change what savepoint does here (${settings.trust.files.map((f) => showControls(f)).join(', ')}). Until you trust them they only narrow:`,
    ),
  ];
  const bySource = new Map<string, string[]>();
  for (const left of settings.leftOut.filter((l) => l.why === 'untrusted')) {
    const server = left.server ? settings.repositoryServers.find((s) => s.name === left.server) : undefined;
    const what = server
      ? `MCP server "${showControls(server.name)}": ${describeRepositoryServer(server)}`
      : left.hook
        ? describeHook(left.hook)
        : showControls(left.what);
    const source = relativeSource(left.source, root);
    bySource.set(source, [...(bySource.get(source) ?? []), what]);
  }
  for (const [source, whats] of bySource) {
    lines.push(`    ${style.bold(showControls(source))}`);
    for (const what of whats) lines.push(`      ${what}`);
  }
  const commands = settings.trust.files.filter((file) => /^\.(savepoint|claude)\/commands\//.test(file));
  if (commands.length)
    lines.push(
      `    ${style.dim(`custom commands: ${commands.length} file${commands.length === 1 ? '' : 's'} (savepoint does not run custom commands yet)`)}`,
    );
  lines.push(`    ${style.dim('Its deny rules, its model and anything that narrows apply either way. What trust means: docs/trust.md')}`);
  return lines.join('\n');
}

/** One repository MCP server as the person decides on it: how it is started (or reached), whole, and the variables of theirs it would expand. */
export function describeRepositoryServer(server: RepositoryServer): string {
  const config = server.config;
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const quote = (part: string) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part));
  let how: string;
  if (config.url !== undefined || config.type === 'http' || config.type === 'sse') {
    const headers = typeof config.headers === 'object' && config.headers ? Object.keys(config.headers) : [];
    how = `http ${text(config.url)}${headers.length ? ` (headers ${headers.join(', ')})` : ''}`;
  } else {
    const args = Array.isArray(config.args) ? config.args.map(text) : [];
    const env = typeof config.env === 'object' && config.env ? Object.keys(config.env) : [];
    how = `runs ${[text(config.command), ...args].map(quote).join(' ')}${env.length ? ` (env ${env.join(', ')})` : ''}`;
  }
  const variables = server.variables.length ? `; would be given your ${server.variables.map((v) => `$${v}`).join(', ')}` : '';
  return showControls(`${how}${variables}`);
}

/** One repository hook as the person decides on it: its event, its matcher, and its whole command, control characters shown. */
export function describeHook(hook: HookSettings): string {
  const on =
    hook.event === 'PreToolUse' || hook.event === 'PostToolUse'
      ? ` on ${hook.matcher === '' || hook.matcher === '*' ? 'every tool' : `"${hook.matcher}"`}`
      : '';
  return showControls(`${hook.event} hook${on}: runs ${hook.command}`);
}

function relativeSource(source: string, root: string | undefined): string {
  return root && source.startsWith(`${root}/`) ? source.slice(root.length + 1) : source;
}
