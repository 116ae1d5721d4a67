// Numbers for people: counts, durations, money and sizes, as the terminal and the HTML report
// show them. Pure: no I/O, no imports from src/.

// One formatter for the process, made on first use: toLocaleString builds a new one at every call
// (~40 µs), and the first Intl object a process makes loads ICU's data (35-100 ms measured, load
// 20), which an integer, the counts every command prints, does not need.
let count: Intl.NumberFormat | undefined;

/** `12,345` */
export function formatCount(n: number): string {
  // A whole number is its digits in groups of three: what en-US's formatter prints for it.
  if (Number.isSafeInteger(n) && !Object.is(n, -0)) return n < 0 ? `-${groupDigits(String(-n))}` : groupDigits(String(n));
  count ??= new Intl.NumberFormat('en-US');
  return count.format(n);
}

function groupDigits(digits: string): string {
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return out;
}

/** `1 line`, `2,000 lines`: a count with its noun, singular when it is one. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${formatCount(count)} ${count === 1 ? noun : nouns}`;
}

/** `812`, `9.3k`, `1.2M` */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `12 ms`, `1.4 s`, `2 min 5 s` */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** An estimate in dollars: `$0`, `<$0.01`, `~$0.03`, `~$1.20`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return '<$0.01';
  return `~$${usd.toFixed(2)}`;
}

/** A byte count: `512 bytes`, `12.3 KB`, `4.1 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
