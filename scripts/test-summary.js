// A second reporter for `npm test` (scripts/run-tests.js): the TAP stream says everything, in the
// order tests end, and a CI log that keeps only its tail loses the one failure among 1,000 passes.
// This one stays silent until the run is over, then prints what a person reads first: each failing
// test with its file and the first lines of its error, and the ten files that took the longest
// (the sum of their top-level tests, each file running beside one other).
import { relative } from 'node:path';

const root = process.cwd();
/** Where a compiled test file came from: its test/*.ts name (scripts/run-tests.js compiles to a temporary folder). */
const sourceName = (file) => {
  if (!file) return '(unknown file)';
  const at = file.indexOf('/test/');
  return at >= 0 ? file.slice(at + 1).replace(/\.js$/, '.ts') : relative(root, file);
};

/** Whether a test is marked todo (`{ todo: true }`, `{ todo: 'why' }` or `test.todo`): Node reports `todo` as true or its text. */
const isTodo = (data) => data.todo !== undefined && data.todo !== false;

/** The reporter: Node's test runner hands it every event of the run and prints what it yields. */
export default async function* summary(source) {
  const failures = [];
  let todos = 0;
  const fileTimes = new Map();
  for await (const event of source) {
    // A suite fails when a test in it fails; the test itself is the one worth naming. A `todo` test
    // that fails is not a failure (Node's runner exits 0 for it and TAP marks it "# TODO"): it is
    // work still to do, counted as such, not among the failing.
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite' && isTodo(event.data)) todos++;
    else if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      const { data } = event;
      const error = data.details?.error;
      const cause = error?.cause ?? error;
      const message = String(cause?.message ?? cause ?? 'failed').split('\n').slice(0, 12).join('\n    ');
      failures.push(`  ${sourceName(data.file)}: ${data.name}\n    ${message}`);
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const file = sourceName(event.data.file);
      fileTimes.set(file, (fileTimes.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const slowest = [...fileTimes].sort((a, b) => b[1] - a[1]).slice(0, 10);
  let text = '\n# summary\n# slowest files (seconds of their tests):\n';
  text += slowest.map(([file, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(6)}  ${file}`).join('\n') + '\n';
  text += failures.length ? `# ${failures.length} failing:\n${failures.join('\n')}\n` : '# no test failed\n';
  if (todos) text += `# ${todos} todo test${todos === 1 ? '' : 's'} not passing yet (not failures)\n`;
  yield text;
}
