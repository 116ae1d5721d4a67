// Tested in test/cli/demo.test.ts.
/**
 * The demo's repository (a tiny shop module with an off-by-one bug and a failing test) and the
 * scripted model that fixes it in six laps. Kept in code, not in files, so the built package
 * carries it and the demo needs nothing but node and git.
 */
export const DEMO_TASK = 'Fix the failing test in this repository';

/** The demo repository's files: a tiny shop module with an off-by-one bug and its failing test. */
export const DEMO_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'shop', private: true, type: 'module', scripts: { test: 'node test.js' } }, null, 2)}\n`,
  'cart.js': `// The total price of a cart: each item's price times its quantity.
export function total(items) {
  let sum = 0;
  for (let i = 1; i < items.length; i++) sum += items[i].price * items[i].qty;
  return sum;
}
`,
  'test.js': `import { total } from './cart.js';

const cases = [
  ['an empty cart', [], 0],
  ['two items: 3x2 + 5x1', [{ price: 3, qty: 2 }, { price: 5, qty: 1 }], 11],
];
let failed = 0;
for (const [name, items, expected] of cases) {
  const actual = total(items);
  if (actual !== expected) {
    failed++;
    console.log(\`FAIL \${name}: expected \${expected}, got \${actual}\`);
  }
}
console.log(\`\${cases.length - failed} passed, \${failed} failed\`);
process.exit(failed ? 1 : 0);
`,
  '.gitignore': 'node_modules/\n',
};

/** Six laps; lap 4 is where the demo kills the process, in the middle of its live model call. */
export const DEMO_SCRIPT = {
  model: 'scripted-demo',
  turns: [
    { delayMs: 700, text: 'Let me run the tests to see what fails.', tools: [{ name: 'run_bash', input: { command: 'node test.js' } }] },
    {
      delayMs: 700,
      text: 'The total is 5 where 11 is expected: the first item (3x2) is missing. Reading cart.js.',
      tools: [{ name: 'read_file', input: { path: 'cart.js' } }],
    },
    {
      delayMs: 700,
      text: 'The loop starts at index 1, so it skips the first item. Fixing the off-by-one.',
      tools: [{ name: 'edit_file', input: { path: 'cart.js', old_string: 'let i = 1;', new_string: 'let i = 0;' } }],
    },
    { delayMs: 1200, text: 'Re-running the tests to check the fix.', tools: [{ name: 'run_bash', input: { command: 'node test.js' } }] },
    {
      delayMs: 700,
      text: 'Tests pass. Checking nothing else starts a loop at 1.',
      tools: [{ name: 'search', input: { pattern: 'i = 1' } }],
    },
    {
      delayMs: 600,
      text: 'Fixed: `total()` in cart.js started its loop at index 1 and skipped the first item. It now starts at 0, and `node test.js` passes (2 passed, 0 failed).',
    },
  ],
};

/** How many steps laps 1-3 take: one model call and one tool call each. */
export const STEPS_BEFORE_LAP_4 = 6;
