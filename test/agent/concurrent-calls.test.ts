// The scheduler of one answer's calls, alone (no journal): at most a tool's maxConcurrent of its
// calls run at once, the next one starting when one ends, always in call order; a call that may
// not run beside others waits for every call before it; a limit stops the answer before a call,
// after the ones started have settled; a throw comes once its whole group has settled.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCalls, type CallPlan } from '../../src/agent/concurrent-calls.js';

interface Call {
  id: string;
  tool: string;
}

// Each call's run waits until the test ends it; `started` says which began, in order.
function harness(limits: Record<string, number | undefined>, stopAt?: string) {
  const started: string[] = [];
  const endings = new Map<string, (fail?: Error) => void>();
  const plan: CallPlan<Call, string, string> = {
    concurrency: (call) => (limits[call.tool] !== undefined ? { tool: call.tool, max: limits[call.tool]! } : undefined),
    stopBefore: (call) => (call.id === stopAt ? `limit at ${call.id}` : undefined),
    run: (call, batch) =>
      new Promise<string>((resolve, reject) => {
        started.push(call.id);
        endings.set(call.id, (fail) => (fail ? reject(fail) : resolve(`${call.id}${batch ? ` of ${batch.size}` : ''}`)));
      }),
  };
  return { started, plan, end: (id: string, fail?: Error) => endings.get(id)!(fail) };
}

// Lets the scheduler go on until `condition` holds (it moves on promise callbacks, never a timer).
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), 'the scheduler got there');
}

const calls = (...ids: string[]): Call[] => ids.map((id) => ({ id, tool: id.replace(/\d+$/, '') }));

describe("one answer's calls", () => {
  test('run at most maxConcurrent of a tool at once, in call order, and a call that runs alone waits for all before it', async () => {
    const { started, plan, end } = harness({ task: 2, read: 8 });
    const done = runCalls(calls('task1', 'task2', 'task3', 'read1', 'write1', 'read2'), plan);
    await until(() => started.length === 2);
    assert.deepEqual(started, ['task1', 'task2'], 'two tasks at once; the third, and the read after it, wait (positions stay in call order)');
    end('task2');
    await until(() => started.length === 4);
    assert.deepEqual(started, ['task1', 'task2', 'task3', 'read1']);
    end('task1');
    end('task3');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(started.length, 4, 'the write waits for the read still running');
    end('read1');
    await until(() => started.length === 5);
    end('write1');
    await until(() => started.length === 6);
    end('read2');
    assert.deepEqual((await done).results, ['task1 of 4', 'task2 of 4', 'task3 of 4', 'read1 of 4', 'write1', 'read2'], 'results in call order');
  });

  test('a limit stops the answer before a call once the calls started have settled; a throw comes after its whole group', async () => {
    const limited = harness({ read: 8 }, 'read3');
    const stopped = runCalls(calls('read1', 'read2', 'read3'), limited.plan);
    await until(() => limited.started.length === 2);
    let settled = false;
    void stopped.then(() => (settled = true));
    limited.end('read1');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'read2 still runs');
    limited.end('read2');
    assert.deepEqual(await stopped, { results: ['read1 of 3', 'read2 of 3'], stopped: 'limit at read3' });

    const failing = harness({ read: 8 });
    const thrown = runCalls(calls('read1', 'read2'), failing.plan);
    await until(() => failing.started.length === 2);
    let rejected = false;
    void thrown.catch(() => (rejected = true));
    failing.end('read1', new Error('read1 failed'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(rejected, false, 'read2 still runs: the answer does not end under it');
    failing.end('read2');
    await assert.rejects(thrown, /read1 failed/);
  });
});
