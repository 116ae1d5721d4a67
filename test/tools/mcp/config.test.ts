// The MCP configuration: `.mcp.json` in Claude Code's format, merged with settings' mcpServers,
// checked as outside input; the secrets in it for the redactor; a server's result as the model reads it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpConfigError } from '../../../src/errors/index.js';
import { loadMcpServers, parseMcpServers } from '../../../src/tools/mcp/config.js';
import { mcpToolName } from '../../../src/tools/mcp/mcp-tools.js';
import { mcpToolResult } from '../../../src/tools/mcp/result.js';
import { mcpSecretEnv } from '../../../src/tools/mcp/secrets.js';
import { createRedactor } from '../../../src/redact/redactor.js';
import { useScratch } from '../../helpers/scratch.js';

const scratch = useScratch();

describe('MCP configuration', () => {
  test('.mcp.json servers are read in Claude Code\'s format, with ${VAR} and ${VAR:-default} expanded', () => {
    const root = scratch.dir();
    writeFileSync(
      join(root, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          db: { command: 'npx', args: ['-y', 'db-server', '${DB_NAME:-main}'], env: { DB_TOKEN: '${TEST_DB_TOKEN}' } },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${TEST_DB_TOKEN}' } },
        },
      }),
    );
    const servers = loadMcpServers(root, { env: { TEST_DB_TOKEN: 'tok-123456789' } });
    assert.deepEqual(servers.get('db'), { name: 'db', type: 'stdio', command: 'npx', args: ['-y', 'db-server', 'main'], env: { DB_TOKEN: 'tok-123456789' }, source: '.mcp.json' });
    assert.deepEqual(servers.get('remote'), { name: 'remote', type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer tok-123456789' }, source: '.mcp.json' });
  });

  test('servers handed in by the caller (settings) join .mcp.json\'s and win on a name both define', () => {
    const root = scratch.dir();
    writeFileSync(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { db: { command: 'old' }, mail: { command: 'mail-server' } } }));
    const servers = loadMcpServers(root, { given: { servers: { db: { command: 'new' } }, source: '.savepoint/settings.json' }, env: {} });
    assert.deepEqual([...servers.keys()].sort(), ['db', 'mail']);
    const db = servers.get('db');
    assert.equal(db?.type === 'stdio' ? db.command : undefined, 'new');
    assert.equal(servers.get('db')?.source, '.savepoint/settings.json');
  });

  test('"network": true is read from the person\'s settings, and refused from .mcp.json (a repository cannot give its server the network)', () => {
    const root = scratch.dir();
    writeFileSync(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { mail: { command: 'mail-server' } } }));
    const servers = loadMcpServers(root, { given: { servers: { db: { command: 'db-server', network: true }, quiet: { command: 'q', network: false } }, source: '~/.config/savepoint/settings.json' }, env: {} });
    assert.equal((servers.get('db') as { network?: boolean }).network, true);
    assert.equal((servers.get('quiet') as { network?: boolean }).network, undefined);
    assert.equal((servers.get('mail') as { network?: boolean }).network, undefined);
    writeFileSync(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { mail: { command: 'mail-server', network: true } } }));
    assert.throws(() => loadMcpServers(root, { env: {} }), (error: unknown) => error instanceof McpConfigError && /key "mail" gives itself "network" in \.mcp\.json, the repository's file: only your own settings/.test(error.message));
  });

  test('no .mcp.json means no servers', () => {
    assert.equal(loadMcpServers(scratch.dir(), { env: {} }).size, 0);
  });

  for (const [what, value, message] of [
    ['mcpServers that is a list', { mcpServers: [] }, /"mcpServers" that is not an object/],
    ['a server name the API would refuse in a tool name', { mcpServers: { 'my server': { command: 'x' } } }, /key "my server" is not a valid server name/],
    ['an env value that is not a string', { mcpServers: { db: { command: 'x', env: { PORT: 5432 } } } }, /key "db" has "env.PORT" that is not a string/],
    ['a url that is not http', { mcpServers: { web: { type: 'http', url: 'file:///etc/passwd' } } }, /key "web" has a "url" that is not http or https/],
    ['an unknown type', { mcpServers: { web: { type: 'websocket', url: 'ws://x' } } }, /key "web" has "type": "websocket"/],
    ['a "network" that is not true or false', { mcpServers: { db: { command: 'x', network: 'yes' } } }, /key "db" has "network" that is not true or false/],
    ['"network" on a server over HTTP', { mcpServers: { web: { type: 'http', url: 'https://x.example/mcp', network: true } } }, /key "web" has "network", which is for servers savepoint starts/],
    ['args that are not strings', { mcpServers: { db: { command: 'x', args: [1] } } }, /mcpServers key "db" has "args" that is not a list of strings/],
    ['an sse server', { mcpServers: { web: { type: 'sse', url: 'http://localhost:1/sse' } } }, /mcpServers key "web" uses "type": "sse"/],
    ['a variable that is not set', { mcpServers: { db: { command: 'x', env: { TOKEN: '${SAVEPOINT_TEST_UNSET_VAR}' } } } }, /uses \$\{SAVEPOINT_TEST_UNSET_VAR\} in "env.TOKEN"/],
  ] as const) {
    test(`${what} is refused with an McpConfigError naming the file and the key`, () => {
      assert.throws(
        () => parseMcpServers(value, '.mcp.json', {}),
        (error: unknown) => error instanceof McpConfigError && error.code === 'EMCPCONFIG' && message.test(error.message) && error.message.startsWith('.mcp.json: '),
      );
    });
  }

  test('secret-named env values and credential headers become redactor secrets', () => {
    const servers = parseMcpServers(
      { mcpServers: { gh: { command: 'gh-mcp', env: { GITHUB_TOKEN: 'ghtok-abcdefgh1234', LOG_LEVEL: 'debug' } }, linear: { url: 'https://mcp.linear.app/mcp', headers: { Authorization: 'Bearer lin-secret-98765', Accept: 'text/plain' } } } },
      '.mcp.json',
      {},
    );
    const secrets = mcpSecretEnv(servers);
    assert.deepEqual(Object.keys(secrets).sort(), ['MCP_GH_GITHUB_TOKEN', 'MCP_LINEAR_AUTHORIZATION_BEARER_TOKEN', 'MCP_LINEAR_AUTHORIZATION_TOKEN']);
    const redactor = createRedactor(secrets);
    assert.equal(redactor.text('token ghtok-abcdefgh1234, header Bearer lin-secret-98765, key lin-secret-98765, level debug'), 'token [REDACTED:MCP_GH_GITHUB_TOKEN], header [REDACTED:MCP_LINEAR_AUTHORIZATION_TOKEN], key [REDACTED:MCP_LINEAR_AUTHORIZATION_BEARER_TOKEN], level debug');
  });

  test('tool names are mcp__<server>__<tool>, with characters the API refuses replaced', () => {
    assert.equal(mcpToolName('github', 'create_issue'), 'mcp__github__create_issue');
    assert.equal(mcpToolName('fs', 'read.file v2'), 'mcp__fs__read_file_v2');
  });
});

describe('an MCP result as the model reads it', () => {
  test('text, images, resources and links become text, and the whole result is kept', () => {
    const sent = {
      content: [
        { type: 'text', text: 'found it' },
        { type: 'image', data: Buffer.alloc(3000).toString('base64'), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'alpha' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
      structuredContent: { n: 1 },
    };
    const result = mcpToolResult(sent);
    assert.equal(result.output, 'found it\n[image: image/png, 2.9 KB]\n[resource: file:///a.txt]\nalpha\n[resource: file:///b.bin, application/octet-stream, 3 bytes]\n[resource link: c <file:///c>]');
    assert.equal(result.isError, false);
    assert.deepEqual(result.mcp, sent);
  });

  test('structured content alone is shown as JSON, and isError makes an error result', () => {
    const result = mcpToolResult({ content: [], structuredContent: { ok: false }, isError: true });
    assert.equal(result.output, '{\n  "ok": false\n}');
    assert.equal(result.isError, true);
    assert.match(result.summary, /^error: /);
  });
});
