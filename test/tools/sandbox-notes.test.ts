// The note a sandboxed command gets when its output shows it hit a boundary: real messages of git,
// coreutils, bash, npm, node, curl, wget, ssh and pip, classified by where the refused write went
// (.git, $HOME, elsewhere; never the working tree or /tmp) and by whether the sandbox has the network.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sandboxNote, type SandboxBoundaries } from '../../src/tools/sandbox-notes.js';

const ROOT = '/home/me/app';
const SANDBOX: SandboxBoundaries = { root: ROOT, gitDirs: [`${ROOT}/.git`], home: '/home/me', network: false, gitWrites: false };
const short = (output: string, b: Partial<SandboxBoundaries> = {}) => sandboxNote(output, { ...SANDBOX, ...b })?.short;

describe('sandboxNote', () => {
  it('names a refused write under .git, with the flag that lifts it', () => {
    for (const output of [
      `fatal: Unable to create '${ROOT}/.git/index.lock': Read-only file system`,
      'error: could not lock config file .git/config: Read-only file system',
      `error: unable to create directory for ${ROOT}/.git/refs/heads/x: Read-only file system`,
    ]) {
      assert.equal(short(output), 'sandbox: .git read-only', output);
      assert.match(sandboxNote(output, SANDBOX)!.text, /^note: this command ran in savepoint's sandbox, where the repository's \.git is read-only: .*--allow-git-writes\.$/);
    }
    assert.equal(short(`fatal: Unable to create '${ROOT}/.git/index.lock': Read-only file system`, { gitWrites: true }), undefined, 'git writes allowed: not the sandbox');
  });

  it('names a refused write under $HOME, and anywhere else outside the tree', () => {
    assert.equal(short("mkdir: cannot create directory ‘/home/me/.cache/x’: Read-only file system"), 'sandbox: $HOME read-only');
    assert.equal(short('npm error code EROFS\nnpm error rofs EROFS: read-only file system, mkdir \'/home/me/.npm/_cacache\''), 'sandbox: $HOME read-only');
    assert.equal(short('bash: /home/me/.bashrc: Read-only file system'), 'sandbox: $HOME read-only');
    assert.equal(short("Error: EROFS: read-only file system, open '/usr/lib/node_modules/x/package.json'"), 'sandbox: read-only outside the tree');
    assert.equal(short('touch: Read-only file system'), 'sandbox: read-only outside the tree', 'no path named: still outside what may be written');
  });

  it('names a refused write, removal or rename of a file that decides what runs (a read-only mount point is "busy" to rm and mv)', () => {
    for (const output of [
      'bash: line 1: .mcp.json: Read-only file system',
      '/usr/bin/bash: line 1: .mcp.json: Read-only file system',
      "rm: cannot remove 'AGENTS.md': Device or resource busy",
      "mv: cannot move 'CLAUDE.md' to 'old.md': Device or resource busy",
      'bash: .savepoint/settings.local.json: Read-only file system',
      `touch: cannot touch '${ROOT}/.claude/settings.json': Read-only file system`,
      'bash: docs/AGENTS.md: Read-only file system',
    ]) {
      assert.equal(short(output), 'sandbox: control files read-only', output);
      assert.match(sandboxNote(output, SANDBOX)!.text, /files that decide what runs \(\.savepoint\/, \.claude\/, \.mcp\.json, every AGENTS\.md and CLAUDE\.md\) are read-only/);
    }
    assert.equal(short("rm: cannot remove '.git': Device or resource busy"), 'sandbox: .git read-only');
    assert.equal(short("rm: cannot remove 'build/out.log': Device or resource busy"), undefined, 'busy elsewhere is the command\'s own affair');
    assert.equal(short('bash: notes.md: Read-only file system'), 'sandbox: read-only outside the tree', 'a path that is no control file is not named as one');
  });

  it('says which files that decide what runs the command created (no mount could stop them), beside any boundary it hit', () => {
    const made = sandboxNote('exit 0', { ...SANDBOX, madeControlFiles: ['.mcp.json'] })!;
    assert.equal(made.short, 'made .mcp.json');
    assert.match(made.text, /^note: this command created \.mcp\.json, which decides what savepoint runs or reads into a new run\./);
    const both = sandboxNote('curl: (6) Could not resolve host: x.example', { ...SANDBOX, madeControlFiles: ['CLAUDE.md', '.claude'] })!;
    assert.equal(both.short, 'sandbox: no network; made CLAUDE.md, .claude');
    assert.equal(both.text.split('\n').length, 2);
    assert.equal(sandboxNote('exit 0', { ...SANDBOX, madeControlFiles: [] }), undefined);
  });

  it('says nothing of a refused write in the working tree or /tmp, nor of output that names none', () => {
    assert.equal(short(`touch: cannot touch '${ROOT}/src/a.js': Read-only file system`), undefined);
    assert.equal(short("touch: cannot touch 'src/a.js': Read-only file system"), undefined);
    assert.equal(short("touch: cannot touch '/tmp/x': Read-only file system"), undefined);
    assert.equal(short('exit 1\n1 failed, 4 passed'), undefined);
    assert.equal(short(''), undefined);
  });

  it('names a network failure when the sandbox has no network, and never when it has', () => {
    for (const output of [
      'curl: (6) Could not resolve host: example.invalid',
      "fatal: unable to access 'https://example.invalid/': Could not resolve host: example.invalid",
      'ssh: Could not resolve hostname github.com: Temporary failure in name resolution',
      "wget: unable to resolve host address 'example.com'",
      'npm error code ENOTFOUND\nnpm error network request to https://registry.npmjs.org/x failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org',
      'npm error code EAI_AGAIN',
      "Failed to establish a new connection: [Errno -3] Temporary failure in name resolution'",
      'connect: Network is unreachable',
      'Error: connect ECONNREFUSED 10.0.0.2:443',
      'ssh: connect to host github.com port 22: Connection refused',
    ]) {
      assert.equal(short(output), 'sandbox: no network', output);
      assert.equal(short(output, { network: true }), undefined, `network allowed: ${output}`);
    }
    assert.match(sandboxNote('curl: (6) Could not resolve host: x', SANDBOX)!.text, /which has no network: .*--allow-network\.$/);
  });

  it("says nothing of a connection refused on the sandbox's own loopback", () => {
    for (const output of ['Error: connect ECONNREFUSED 127.0.0.1:5432', 'curl: (7) Failed to connect to localhost port 80 after 0 ms: Connection refused', 'connect ECONNREFUSED ::1:3000', 'Connection refused']) {
      assert.equal(short(output), undefined, output);
    }
  });

  it('gives both notes when a command hit both boundaries, the same words every time', () => {
    const output = `curl: (6) Could not resolve host: x\nfatal: Unable to create '${ROOT}/.git/index.lock': Read-only file system`;
    const note = sandboxNote(output, SANDBOX)!;
    assert.equal(note.short, 'sandbox: no network, .git read-only');
    assert.equal(note.text.split('\n').length, 2);
    assert.deepEqual(sandboxNote(output, SANDBOX), note);
  });
});
