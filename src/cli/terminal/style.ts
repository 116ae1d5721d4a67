// Terminal conventions: colour only on a TTY and never with NO_COLOR; widths that fit the screen.
// Tested in test/cli/step-printer.test.ts.
import type { Writable } from 'node:stream';

/** How text is painted for one stream, and how wide its lines may be. */
export interface Style {
  color: boolean;
  width: number;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
  cyan(text: string): string;
}

/** The narrowest width lines are laid out for: a narrower terminal wraps them. */
export const MIN_WIDTH = 40;

/** The style for a stream: colours when it is a terminal and NO_COLOR is unset (or FORCE_COLOR set). */
export function styleFor(stream: Writable & { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): Style {
  const color = env.FORCE_COLOR ? env.FORCE_COLOR !== '0' : Boolean(stream.isTTY) && !('NO_COLOR' in env) && env.TERM !== 'dumb';
  const paint = (code: string, reset: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[${reset}m` : text);
  return {
    color,
    // A pseudo-terminal with no size (`script` without a terminal) reports 0 columns: unknown.
    // Lines are laid out for MIN_WIDTH columns at the least.
    width: Math.max(MIN_WIDTH, Math.min(stream.columns || Number(env.COLUMNS) || 120, 200)),
    green: paint('32', '39'),
    yellow: paint('33', '39'),
    red: paint('31', '39'),
    cyan: paint('36', '39'),
    dim: paint('2', '22'),
    bold: paint('1', '22'),
  };
}
