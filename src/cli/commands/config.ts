// `savepoint config`: the effective settings and the file each came from (user, project, local),
// so that "why did it not ask?" and "why this model?" have an answer. A file that cannot be used
// is named with its key, as for every command that drives a run.
// Tested in test/cli/settings.test.ts.
import type { Writable } from 'node:stream';
import { Command } from 'commander';
import { loadSettings, type Settings, type Sourced } from '../../settings/index.js';
import { repositoryRoot } from '../view/session-settings.js';
import { styleFor, type Style } from '../terminal/style.js';
import { showControls, terminalJson } from '../../format/text.js';

/** The `config` command. */
export function configCommand(): Command {
  return new Command('config')
    .summary('show the effective settings and the file each came from')
    .description(
      "Show the settings in force here: the user's $XDG_CONFIG_HOME/savepoint/settings.json (default ~/.config), " +
        "the project's .savepoint/settings.json, then .savepoint/settings.local.json, each later one overriding the " +
        'earlier ones (rules add up); flags given to a command go over all of them. Each value names its file. ' +
        'Until you trust the folder, its own files only narrow: what they hold that is left out is listed with why (docs/trust.md).',
    )
    .option('--json', 'print the settings as JSON')
    .action((flags: { json?: boolean }) => {
      const settings = loadSettings(repositoryRoot(process.cwd()), process.env);
      if (flags.json) process.stdout.write(`${terminalJson(settingsJson(settings), 2)}\n`);
      else printSettings(settings, process.stdout, styleFor(process.stdout));
    });
}

/** The settings as `config --json` prints them: every value as { value, source }. */
export function settingsJson(settings: Settings): Record<string, unknown> {
  return {
    files: settings.files,
    model: settings.model ?? null,
    remote: settings.remote ?? null,
    permissions: { defaultMode: settings.defaultMode, allow: settings.allow, deny: settings.deny },
    sandbox: { network: settings.sandbox.network ?? null, gitWrites: settings.sandbox.gitWrites ?? null },
    mcpServers: settings.mcpServers,
    hooks: settings.hooks,
    unknownKeys: settings.unknownKeys,
    trust: settings.trust,
    leftOut: settings.leftOut,
    repositoryServers: settings.repositoryServers.map(({ name, source, digest, variables, approved, inForce }) => ({
      name,
      source,
      digest,
      variables,
      approved,
      inForce,
    })),
  };
}

function printSettings(settings: Settings, out: Writable, style: Style): void {
  const from = (s: Sourced<unknown> | undefined) =>
    style.dim(s ? (s.source === 'default' ? '(default)' : `from ${s.source}`) : '(not set)');
  const lines: string[] = [
    style.bold('Settings files') + style.dim(' (later ones override earlier ones; rules add up; flags go over all)'),
  ];
  for (const file of settings.files) lines.push(`  ${file.scope.padEnd(8)} ${file.path}  ${style.dim(file.found ? 'read' : 'not there')}`);
  lines.push('', style.bold('Effective settings'));
  const row = (name: string, value: string, source: Sourced<unknown> | undefined) =>
    lines.push(`  ${name.padEnd(28)} ${value}  ${from(source)}`);
  row('model', settings.model?.value ?? "the run's own, else the default", settings.model);
  row('remote', settings.remote?.value ?? '(none: only --push pushes)', settings.remote);
  row('permissions.defaultMode', settings.defaultMode.value, settings.defaultMode);
  for (const list of ['allow', 'deny'] as const) {
    if (settings[list].length === 0) row(`permissions.${list}`, '(no rules)', undefined);
    for (const rule of settings[list]) row(`permissions.${list}`, rule.value, rule);
  }
  row('sandbox.network', String(settings.sandbox.network?.value ?? false), settings.sandbox.network);
  row('sandbox.gitWrites', String(settings.sandbox.gitWrites?.value ?? false), settings.sandbox.gitWrites);
  const servers = Object.entries(settings.mcpServers);
  if (servers.length === 0) row('mcpServers', '(none)', undefined);
  for (const [name, server] of servers) {
    const what = 'url' in server.value ? server.value.url : [server.value.command, ...(server.value.args ?? [])].join(' ');
    row(`mcpServers.${name}`, what, server);
  }
  if (settings.hooks.length === 0) row('hooks', '(none)', undefined);
  for (const hook of settings.hooks) {
    const on =
      hook.event === 'PreToolUse' || hook.event === 'PostToolUse'
        ? `${hook.matcher === '' || hook.matcher === '*' ? 'every tool' : `"${hook.matcher}"`}: `
        : '';
    row(`hooks.${hook.event}`, showControls(`${on}${hook.command}${hook.sandboxed ? ' (in the sandbox)' : ''}`), {
      value: hook,
      source: hook.source,
    });
  }
  for (const { file, key } of settings.unknownKeys)
    lines.push(style.yellow(`  "${key}" in ${file} is not a savepoint setting: it is ignored.`));
  lines.push('', style.bold('Trust') + style.dim(' (docs/trust.md)'));
  const { trust } = settings;
  if (trust.state === 'nothing-to-trust')
    lines.push(
      `  ${trust.folder ? 'this repository has no files of its own that decide what runs: nothing to trust' : 'not in a repository'}`,
    );
  else
    lines.push(
      `  ${trust.state === 'trusted' ? 'trusted' : 'not trusted'}: ${trust.files.map(showControls).join(', ')}${trust.state === 'trusted' ? '' : style.dim('  (run with --trust, or answer the trust question on a terminal)')}`,
    );
  for (const left of settings.leftOut) {
    const why = left.why === 'untrusted' ? 'the folder is not trusted' : `not approved: savepoint mcp approve ${left.server}`;
    lines.push(style.yellow(`  left out: ${showControls(left.what)} from ${showControls(left.source)} (${why})`));
  }
  out.write(`${lines.join('\n')}\n`);
}
