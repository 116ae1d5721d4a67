// Terminal conventions: colour only on a TTY and never with NO_COLOR; widths that fit the screen.
import type { Writable } from 'node:stream';

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

// The style for a stream: colours when it is a terminal and NO_COLOR is unset (or FORCE_COLOR set).
export function styleFor(stream: Writable & { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): Style {
  const color = env.FORCE_COLOR ? env.FORCE_COLOR !== '0' : Boolean(stream.isTTY) && !('NO_COLOR' in env) && env.TERM !== 'dumb';
  const paint = (code: string, reset: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[${reset}m` : text);
  return {
    color,
    width: Math.max(60, Math.min(stream.columns ?? (Number(env.COLUMNS) || 120), 200)),
    green: paint('32', '39'),
    yellow: paint('33', '39'),
    red: paint('31', '39'),
    cyan: paint('36', '39'),
    dim: paint('2', '22'),
    bold: paint('1', '22'),
  };
}

// Cuts `text` to `max` characters on one line, with an ellipsis.
export function fit(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (max <= 1) return '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

// `12 ms`, `1.4 s`, `2 min 5 s`
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

// `12,345`
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
