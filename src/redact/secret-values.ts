// Which values count as secrets, and the other forms they take in text. Pure code: the environment
// (and a way to tell a file path) is handed in.
//
// A variable counts when its name looks like a secret's and its value could be one: 8 characters or
// more, not an ordinary word (SECRET_KEY_BASE=development) and not the path of an existing file
// (GOOGLE_APPLICATION_CREDENTIALS=/home/me/creds.json). Its base64 forms count too, since `base64`,
// HTTP basic auth and Kubernetes secrets print them.
// Tested in test/redact/secrets.test.ts.

/** A secret-looking environment variable name. */
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

/** Values shorter than this are not secrets by value: "1" or "true" would match everywhere. */
export const MIN_SECRET_LENGTH = 8;

/** An environment variable whose value is redacted wherever it appears. */
export interface SecretVariable {
  name: string;
  value: string;
}

/** A secret-named variable that is not treated as a secret, and why (for debug output). */
export interface IgnoredVariable {
  name: string;
  reason: string;
}

/** Splits the secret-named variables of `env` into secrets (longest value first) and ones left alone. */
export function secretVariables(
  env: NodeJS.ProcessEnv,
  isFile: (value: string) => boolean = () => false,
): { secrets: SecretVariable[]; ignored: IgnoredVariable[] } {
  const secrets: SecretVariable[] = [];
  const ignored: IgnoredVariable[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!SECRET_NAME.test(name) || typeof value !== 'string' || value.trim() === '') continue;
    const why = ordinaryValue(value, isFile);
    if (why) ignored.push({ name, reason: why });
    else secrets.push({ name, value });
  }
  // Longest first, so a secret that contains another is replaced whole.
  secrets.sort((a, b) => b.value.length - a.value.length);
  return { secrets, ignored };
}

// Why a secret-named variable's value is not a secret, or undefined when it may be one.
function ordinaryValue(value: string, isFile: (value: string) => boolean): string | undefined {
  if (value.trim().length < MIN_SECRET_LENGTH) return `its value is shorter than ${MIN_SECRET_LENGTH} characters`;
  // One word in one case (or capitalised): development, Production, CHANGEME. Random letters-only
  // tokens mix cases, so they still count.
  if (/^(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)$/.test(value)) return 'its value is an ordinary word';
  if (/^~?\//.test(value) && !/\s/.test(value) && isFile(value)) return 'its value is the path of a file';
  return undefined;
}

/** An encoded form of a secret value, as it appears inside longer encoded text. */
export interface EncodedForm {
  /** `base64`, `base64+1`, `base64url+2`...: the encoding and the byte offset the value started at. */
  encoding: string;
  text: string;
}

// Shorter encoded runs than this would match ordinary base64 text by chance.
const MIN_ENCODED_LENGTH = 12;

/**
 * The base64 and base64url forms of `value`: encoded on its own (offset 0) or after one or two other
 * bytes (as in `user:token` encoded together), each cut to the characters that depend on `value`
 * alone, so they are found inside any longer base64 text.
 */
export function encodedForms(value: string): EncodedForm[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms: EncodedForm[] = [];
  const seen = new Set<string>();
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]);
    // Character i holds bits 6i..6i+5; the value's bits run from 8*offset to 8*(offset+length).
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    for (const kind of ['base64', 'base64url'] as const) {
      const text = encoded.toString(kind).slice(first, end);
      if (text.length < MIN_ENCODED_LENGTH || seen.has(text)) continue;
      seen.add(text);
      forms.push({ encoding: offset ? `${kind}+${offset}` : kind, text });
    }
  }
  return forms;
}
