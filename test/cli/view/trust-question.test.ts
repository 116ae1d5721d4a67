// Trust on the terminal, its decisions and words: whether to ask about the folder (untrusted, and it
// brings something left out, not declined already) and about each unapproved server; the one line
// said without a terminal; a server and a hook described whole, control characters shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeHook, describeRepositoryServer, leftOutLine, trustQuestionsFor } from '../../../src/cli/view/trust-question.js';
import type { Settings } from '../../../src/settings/index.js';

const server = (name: string, fields: Record<string, unknown> = {}) => ({ name, digest: `d-${name}`, approved: false, variables: [], config: { command: 'npx', args: ['-y', name] }, ...fields });
function settings(state: 'trusted' | 'untrusted', leftOut: Array<Record<string, unknown>>, servers: ReturnType<typeof server>[] = []): Settings {
  return { trust: { state, digest: 'folder-digest', files: ['.savepoint/settings.json'] }, leftOut, repositoryServers: servers } as unknown as Settings;
}
const untrusted = { what: 'allow rule "run_bash"', source: '/repo/.savepoint/settings.json', why: 'untrusted' };

test('an untrusted folder that brings something is asked about, with its servers after it; declined, neither', () => {
  const s = settings('untrusted', [untrusted], [server('db')]);
  assert.deepEqual(trustQuestionsFor(s), { folder: true, servers: [server('db')] });
  assert.deepEqual(trustQuestionsFor(s, new Set(['folder-digest'])), { folder: false, servers: [] }, 'declined in this process: not asked again');
  assert.deepEqual(trustQuestionsFor(settings('untrusted', [])), { folder: false, servers: [] }, 'nothing left out: nothing to ask');
});

test('a trusted folder asks about each server not approved nor declined', () => {
  const s = settings('trusted', [], [server('db'), server('web', { approved: true }), server('old')]);
  assert.deepEqual(trustQuestionsFor(s, new Set(['d-old'])).servers.map((each) => each.name), ['db']);
});

test('without a terminal, one line says what was left out and how to let it in', () => {
  const s = settings('untrusted', [untrusted, { what: 'MCP server "db"', source: '/repo/.mcp.json', why: 'unapproved', server: 'db' }]);
  assert.equal(
    leftOutLine(s, '/repo'),
    'Left out: this folder is not trusted, so its allow rule "run_bash" (.savepoint/settings.json) was left out (its deny rules apply): run with --trust, or on a terminal, to trust it; ' +
      'the MCP server "db" of this repository is not approved and will not start: savepoint mcp approve db (docs/trust.md).',
  );
  const many = settings('untrusted', Array.from({ length: 8 }, (_, i) => ({ ...untrusted, what: `rule ${i}` })));
  assert.match(leftOutLine(many, undefined)!, /rule 5 \(\/repo\/\.savepoint\/settings\.json\) and 2 more were left out/);
  assert.equal(leftOutLine(settings('trusted', []), '/repo'), undefined);
});

test('a server shown whole: its command quoted where needed, or its URL, and the variables it would get', () => {
  assert.equal(describeRepositoryServer(server('db', { config: { command: 'node', args: ['server.js', 'a b'], env: { TOKEN: '${TOKEN}' } }, variables: ['TOKEN'] }) as never), 'runs node server.js "a b" (env TOKEN); would be given your $TOKEN');
  assert.equal(describeRepositoryServer(server('web', { config: { type: 'http', url: 'https://x.example/mcp', headers: { Authorization: 'x' } } }) as never), 'http https://x.example/mcp (headers Authorization)');
  assert.doesNotMatch(describeRepositoryServer(server('evil', { config: { command: 'sh\x1b[2J' } }) as never), /\x1b/);
});

test('a hook shown with its event, its matcher and its whole command', () => {
  assert.equal(describeHook({ event: 'PreToolUse', matcher: '*', command: 'lint' } as never), 'PreToolUse hook on every tool: runs lint');
  assert.equal(describeHook({ event: 'PostToolUse', matcher: 'edit_file', command: 'fmt' } as never), 'PostToolUse hook on "edit_file": runs fmt');
  assert.equal(describeHook({ event: 'Stop', matcher: '', command: 'notify\x07' } as never), 'Stop hook: runs notify^G');
});
