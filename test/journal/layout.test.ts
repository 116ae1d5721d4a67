// Where a run's files live on the agent-journal branch: run.json, step files sharded 100 to a
// directory (their names sort an intent just before its result), and blobs by id; a name read back
// from the branch is parsed only when it is a step file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStepFileName, runBlobPath, runRecordPath, shardName, stepFileName, stepFilePath, STEPS_PER_SHARD } from '../../src/journal/layout.js';

describe('journal layout', () => {
  it('puts run.json, blobs and steps under runs/<run>/, a hundred steps to a shard', () => {
    assert.equal(runRecordPath('fix-tests-1a2b'), 'runs/fix-tests-1a2b/run.json');
    assert.equal(runBlobPath('r', 'ab'.repeat(20)), `runs/r/blobs/${'ab'.repeat(20)}`);
    assert.equal(STEPS_PER_SHARD, 100);
    assert.deepEqual([0, 99, 100, 199, 12_345, 999_999].map(shardName), ['000', '000', '001', '001', '123', '9999']);
    assert.equal(stepFilePath('r', 4, 'run_bash', 'result'), 'runs/r/steps/000/000004-run_bash.json');
    assert.equal(stepFilePath('r', 104, 'model', 'intent'), 'runs/r/steps/001/000104-model.intent.json');
  });

  it("sorts a step's intent just before its result, and both before the next step", () => {
    const names = [stepFileName(5, 'run_bash', 'result'), stepFileName(6, 'model', 'intent'), stepFileName(5, 'run_bash', 'intent')];
    assert.deepEqual([...names].sort(), ['000005-run_bash.intent.json', '000005-run_bash.json', '000006-model.intent.json']);
  });

  it('parses back what it names, past a million steps too, and nothing that is not a step file', () => {
    for (const [step, kind, phase] of [[0, 'model', 'result'], [7, 'edit_file', 'intent'], [1_234_567, 'mcp-tool_x', 'result']] as const) {
      assert.deepEqual(parseStepFileName(stepFileName(step, kind, phase)), { step, kind, phase });
    }
    for (const name of ['run.json', '00004-model.json', '000004-.json', '000004-9kind.json', '000004-model.json.tmp', '000004-model.intent', 'x000004-model.json']) {
      assert.equal(parseStepFileName(name), undefined, name);
    }
  });
});
