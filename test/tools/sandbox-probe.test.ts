// The probe for bubblewrap, where the machine has none: it answers at once and leaves nothing behind
// that would keep the process alive (a refused run ends right after saying why), and the way out it
// names is the one this platform offers: the distribution's package on Linux, a Linux machine or
// container (or --no-sandbox) where bubblewrap does not exist at all.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { installCommand, probeSandboxAsync, sandboxRemedy } from '../../src/tools/sandbox.js';

// How many timers and child processes this process holds.
const held = () => {
  const kinds = process.getActiveResourcesInfo();
  return { timers: kinds.filter((kind) => kind === 'Timeout').length, children: kinds.filter((kind) => kind === 'ProcessWrap').length };
};

describe('without bubblewrap', () => {
  test('the probe says bubblewrap is missing and leaves no timer or child behind', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'savepoint-nobwrap-'));
    const path = process.env.PATH;
    const before = held();
    process.env.PATH = empty; // spawn looks bwrap up on this PATH: nothing there
    let probe: Awaited<ReturnType<typeof probeSandboxAsync>>;
    try {
      probe = await probeSandboxAsync(empty, []);
    } finally {
      process.env.PATH = path;
      rmSync(empty, { recursive: true, force: true });
    }
    assert.deepEqual(probe, { ok: false, reason: 'bubblewrap (bwrap) is not installed', missing: true });
    // The child's handle closes a moment after its spawn failed: wait for that (polled), then nothing else may be left.
    for (const until = Date.now() + 30_000; held().children > before.children && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(held(), before, `the probe left a timer or a child behind: ${process.getActiveResourcesInfo().join(', ')}`);
  });

  test("on Linux the message names the distribution's package", () => {
    assert.equal(installCommand('ID=debian\nVERSION_ID="12"\n'), '"apt-get install bubblewrap"');
    assert.equal(installCommand('ID=linuxmint\nID_LIKE="ubuntu debian"\n'), '"apt-get install bubblewrap"');
    assert.equal(installCommand('ID="fedora"\n'), '"dnf install bubblewrap"');
    assert.equal(installCommand('ID="rocky"\nID_LIKE="rhel centos fedora"\n'), '"dnf install bubblewrap"');
    assert.equal(installCommand('ID=arch\n'), '"pacman -S bubblewrap"');
    assert.equal(installCommand('ID=alpine\n'), '"apk add bubblewrap"');
    assert.equal(installCommand('ID="opensuse-tumbleweed"\nID_LIKE="opensuse suse"\n'), '"zypper install bubblewrap"');
    assert.match(installCommand(''), /apt-get install bubblewrap.*dnf install bubblewrap/, 'an unknown Linux: the common ones');
    const remedy = sandboxRemedy({ missing: true }, 'linux', 'ID=fedora\n');
    assert.equal(remedy, 'Install bubblewrap ("dnf install bubblewrap") to confine them');
    assert.match(sandboxRemedy({ missing: false }, 'linux', 'ID=debian\n'), /user namespaces/, 'installed but failing: installing it again is no advice');
  });

  test('on macOS (no bubblewrap exists there) it names what the person can do instead of a Linux package', () => {
    const remedy = sandboxRemedy({ missing: true }, 'darwin');
    assert.doesNotMatch(remedy, /apt-get|dnf|pacman|Install bubblewrap/);
    assert.match(remedy, /only on Linux, and macOS has no equivalent/);
    assert.match(remedy, /Linux virtual machine or container/);
    assert.match(remedy, /--no-sandbox inside a virtual machine or container/);
    assert.match(sandboxRemedy({ missing: true }, 'win32'), /WSL 2/);
  });
});
