// The HTML timeline's stylesheet and script, read from the files beside the module, once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { timelineAssets } from '../../src/report/timeline-assets.js';

test('the assets are the files timeline.css and timeline.js, read once and kept', () => {
  const assets = timelineAssets();
  assert.equal(assets.css, readFileSync(new URL('../../src/report/timeline.css', import.meta.url), 'utf8'));
  assert.equal(assets.js, readFileSync(new URL('../../src/report/timeline.js', import.meta.url), 'utf8'));
  assert.ok(assets.css.length > 0 && assets.js.length > 0);
  assert.equal(timelineAssets(), assets);
});
