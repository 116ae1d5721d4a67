// Small text helpers of the tools' outputs and summaries (general formatting lives in src/format/).

/** The last non-empty line of a text (what a command's summary shows), or '' if there is none. */
export function lastLine(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line) return line;
  }
  return '';
}

/** Renders a value the model sent as text for a step description, whatever its type. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
