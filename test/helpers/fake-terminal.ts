// A stand-in for a terminal's input, for the session prompt's tests (test/cli/session-prompt.test.ts,
// test/cli/interactive-unsent.test.ts): a readable that says it is a terminal and remembers the raw
// modes it was put in. What is typed is written to it.
import { PassThrough } from 'node:stream';

/** A readable that says it is a terminal; `modes` lists the raw modes it was put in, in order. */
export type FakeTerminal = PassThrough & { isTTY: true; isRaw: boolean; modes: boolean[]; setRawMode(raw: boolean): void };

/** A new FakeTerminal, in cooked mode. */
export function fakeTerminal(): FakeTerminal {
  const input = new PassThrough() as FakeTerminal;
  input.isTTY = true;
  input.isRaw = false;
  input.modes = [];
  input.setRawMode = (raw: boolean) => {
    input.isRaw = raw;
    input.modes.push(raw);
  };
  return input;
}
