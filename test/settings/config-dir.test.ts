// The user's config folder: $XDG_CONFIG_HOME/savepoint when that is an absolute path, else ~/.config/savepoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { userConfigDir } from '../../src/settings/config-dir.js';

test('XDG_CONFIG_HOME when absolute, else HOME/.config; a relative XDG_CONFIG_HOME is ignored', () => {
  assert.equal(userConfigDir({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/a' }), '/cfg/savepoint');
  assert.equal(userConfigDir({ HOME: '/home/a' }), '/home/a/.config/savepoint');
  assert.equal(userConfigDir({ XDG_CONFIG_HOME: 'rel', HOME: '/home/a' }), '/home/a/.config/savepoint');
});
