// Keeping secrets out of the journal. Everything written to the branch (entries, commit messages,
// text files in checkpoints) passes through a redactor first: values of environment variables named
// like secrets, and well-known key shapes, become `[REDACTED:NAME]`. Pure code: the environment is
// handed in. Because the valve returns what it recorded, a live run sees the same redacted text
// that a replay will: the model never sees the secret, and replay stays exact.

// A secret-looking environment variable name.
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

// Well-known key shapes, found even when they are not in the environment.
export const KEY_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'PRIVATE_KEY', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g },
  { name: 'ANTHROPIC_KEY', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { name: 'OPENAI_KEY', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/g },
  { name: 'GITHUB_TOKEN', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/g },
  { name: 'AWS_ACCESS_KEY', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: 'SLACK_TOKEN', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
];

// Values shorter than this are not redacted by value: "1" or "true" would match everywhere.
const MIN_SECRET_LENGTH = 8;

export interface Redactor {
  // Redacts one string.
  text(value: string): string;
  // Redacts every string inside a JSON-like value (object keys included), returning a copy.
  value<V>(value: V): V;
  // The number of secret values it looks for by name (for messages and tests).
  readonly secretCount: number;
}

// A redactor for the secrets in `env`.
export function createRedactor(env: NodeJS.ProcessEnv = process.env): Redactor {
  const secrets = Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && typeof entry[1] === 'string' && entry[1].trim().length >= MIN_SECRET_LENGTH)
    .map(([name, value]) => ({ name, value }))
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.value.length - a.value.length);

  const text = (input: string): string => {
    let out = input;
    for (const { name, value } of secrets) if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`);
    for (const { name, pattern } of KEY_PATTERNS) out = out.replace(pattern, `[REDACTED:${name}]`);
    return out;
  };

  const value = <V>(input: V): V => {
    if (typeof input === 'string') return text(input) as V;
    if (Array.isArray(input)) return input.map((item) => value(item)) as V;
    if (input !== null && typeof input === 'object' && !Buffer.isBuffer(input)) {
      const out: Record<string, unknown> = {};
      for (const [key, member] of Object.entries(input)) out[text(key)] = value(member);
      return out as V;
    }
    return input;
  };

  return { text, value, secretCount: secrets.length };
}
