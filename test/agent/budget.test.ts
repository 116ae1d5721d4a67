// A run's limits: none by default; steps are the valve's position (read, not counted), model calls
// and their estimated cost counted for model steps; a step limit stops any step, a turn or cost limit
// only a model call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Budget } from '../../src/agent/budget.js';

const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });

test('no limits never stop a run', () => {
  const budget = new Budget();
  for (let i = 0; i < 1000; i++) budget.countModelCall({ name: 'claude-sonnet-4', usage: usage(1000, 1000) });
  assert.equal(budget.exceeded(true), undefined);
});

test('steps are the position it is given, turns and cost only model calls, priced for their model', () => {
  let position = 0;
  const budget = new Budget({}, () => position);
  position = 4;
  budget.countModelCall({ name: 'claude-sonnet-4', usage: usage(1_000_000, 0) });
  budget.countModelCall({ name: 'claude-sonnet-4', usage: undefined });
  budget.countModelCall({ name: 'script:turns.json', usage: usage(1_000_000, 1_000_000) });
  assert.deepEqual([budget.steps, budget.turns, budget.cost], [4, 3, 3]);
});

test('the step limit stops any step once reached, and says where the run stood', () => {
  let position = 1;
  const budget = new Budget({ maxSteps: 2 }, () => position);
  assert.equal(budget.exceeded(false), undefined);
  position = 2;
  assert.deepEqual(budget.exceeded(false), { limit: 'max-steps', value: 2, reached: 2 });
});

test('turn and cost limits stop the next model call, not a tool call', () => {
  const turns = new Budget({ maxTurns: 1 });
  turns.countModelCall({ name: 'm', usage: undefined });
  assert.equal(turns.exceeded(false), undefined);
  assert.deepEqual(turns.exceeded(true), { limit: 'max-turns', value: 1, reached: 1 });
  const cost = new Budget({ maxCost: 0.5 });
  cost.countModelCall({ name: 'claude-opus-4', usage: usage(0, 5_000) }); // 5k output tokens at $75/M: $0.375
  assert.equal(cost.exceeded(true), undefined);
  cost.countModelCall({ name: 'claude-opus-4', usage: usage(0, 5_000) });
  const reached = cost.exceeded(true);
  assert.equal(reached?.limit, 'max-cost');
  assert.ok(Math.abs(reached!.reached - 0.75) < 1e-9, String(reached?.reached));
  assert.equal(cost.exceeded(false), undefined);
});
