// Errors of the settings files (user, project, local): a file that does not parse, or a key of the
// wrong shape. Each names the file and the key, so the fix is one edit away.
// Tested in test/settings/permissions.test.ts and test/settings/custom-commands.test.ts.
import { SavepointError } from './savepoint-error.js';

/** A settings file that cannot be used: not JSON, not an object, or a key of the wrong type. Nothing ran. */
export class SettingsFileError extends SavepointError<{ file: string; key?: string; problem: string }> {
  constructor(file: string, problem: string, key?: string) {
    super(
      'ESETTINGS',
      `The settings file ${file} cannot be used: ${key ? `"${key}" ${problem}` : problem}. Fix or remove it and run the ` +
        `command again; nothing was run (see docs/settings.md for the keys).`,
      { file, problem, ...(key ? { key } : {}) },
    );
  }
}

/** A custom command (`<name>.md`) that cannot be used: unreadable, too long, or a repository's command in a folder not trusted. Nothing was sent. */
export class CustomCommandError extends SavepointError<{ name: string; file: string; problem: string }> {
  constructor(name: string, file: string, problem: string) {
    super('ECOMMAND', `The custom command /${name} (${file}) ${problem}; nothing was sent.`, { name, file, problem });
  }
}
