// Secrets for one run, as the CLI wires them: a redactor for everything the journal keeps and a
// revealer for the inputs of effects, sharing this repository's secret book. Secret-named variables
// left alone (too short, an ordinary word, a file path) are named once on stderr with SAVEPOINT_DEBUG=1.
// Tested in test/redact/secrets.test.ts.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { createRedactor, type Redactor } from './redactor.js';
import { createRevealer, type Revealer } from './reveal.js';
import { createNameRecorder, type NameRecorder } from './names.js';
import { FileSecretBook, secretBookPath } from './secret-book.js';

/** The redactor and revealer of a run in the repository whose git common directory is `commonDir`. */
export interface RunSecrets {
  redactor: Redactor;
  revealer: Revealer;
  /** The name each file is recorded under in the checkpoints (names.ts), tagged through the book. */
  recordName: NameRecorder;
}

// Said once per process, whoever asks.
const said = new Set<string>();

/** Builds a run's secrets from `env` and the repository's secret book. */
export function openRunSecrets(
  commonDir: string,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): RunSecrets {
  const book = new FileSecretBook(secretBookPath(commonDir));
  const isFile = (value: string) => existsSync(value.startsWith('~/') ? `${homedir()}${value.slice(1)}` : value);
  const redactor = createRedactor(env, { book, isFile });
  if (env.SAVEPOINT_DEBUG === '1') {
    for (const { name, reason } of redactor.ignored) {
      if (said.has(name)) continue;
      said.add(name);
      log(`savepoint debug: ${name} is not treated as a secret: ${reason}.`);
    }
  }
  return { redactor, revealer: createRevealer(env, book, isFile), recordName: createNameRecorder(redactor.text, book) };
}
