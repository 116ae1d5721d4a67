// Checks a tool call's input against the tool's own JSON Schema (the one the model was shown), by
// hand: only the few keywords the tools use (type, required, minimum, additionalProperties).
import { cutAfter } from '../format/text.js';
import type { ToolInputSchema } from './types.js';

interface PropertySchema {
  type?: string;
  minimum?: number;
}

/** What is wrong with `input`, as one sentence for the model, or undefined when it is valid. */
export function validateInput(schema: ToolInputSchema, input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return `The input must be a JSON object, not ${describeType(input)}.`;
  }
  const record = input as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of schema.required ?? []) {
    if (record[name] === undefined) problems.push(`"${name}" is required`);
  }
  for (const [name, value] of Object.entries(record)) {
    const property = schema.properties[name] as PropertySchema | undefined;
    if (!property) {
      if (schema.additionalProperties === false) problems.push(`"${name}" is not a known parameter`);
      continue;
    }
    // A null for an optional parameter means "not given", as some models send it.
    if (value === undefined || (value === null && !schema.required?.includes(name))) continue;
    const problem = checkValue(property, value);
    if (problem) problems.push(`"${name}" ${problem}`);
  }
  if (!problems.length) return undefined;
  const known = Object.keys(schema.properties).join(', ');
  return `Invalid input: ${problems.join('; ')}. Parameters: ${known}.`;
}

function checkValue(property: PropertySchema, value: unknown): string | undefined {
  switch (property.type) {
    case 'string':
      if (typeof value !== 'string') return `must be a string, not ${describeType(value)}`;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return `must be true or false, not ${describeType(value)}`;
      break;
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number, not ${describeType(value)}`;
      if (property.type === 'integer' && !Number.isInteger(value)) return `must be a whole number, not ${value}`;
      if (property.minimum !== undefined && value < property.minimum) return `must be at least ${property.minimum}, not ${value}`;
      break;
  }
  return undefined;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(cutAfter(value, 40))}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
