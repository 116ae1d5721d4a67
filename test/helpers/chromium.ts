// Headless Chromium for the tests of the HTML timeline: the page's DOM after its scripts ran.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

/** Where Debian's chromium package puts the browser (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Opens `url` in headless Chromium (profile in `profile`) and returns the DOM after its scripts ran. */
export async function chromiumDom(url: string, profile: string): Promise<string> {
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`, '--virtual-time-budget=2000', '--dump-dom', url];
  const child = spawn(CHROMIUM, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let dom = '';
  child.stdout.on('data', (chunk: Buffer) => (dom += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, 'chromium --dump-dom failed');
  return dom;
}
