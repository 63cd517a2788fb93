// The console's ordering of one deployment's events (console/src/live-order.ts): duplicates dropped, a gap held until
// it fills, the end recognised.
import { describe, expect, it } from 'vitest';
import { isEnd, receive, startOrder, type Order, type SeqEvent } from '../../../console/src/live-order.js';

const log = (id: number): SeqEvent => ({ id, event: 'log', data: { log: { message: `line ${id}` } } });
const ids = (events: readonly SeqEvent[]) => events.map((e) => e.id);

/** Feeds batches one after another; the seqs applied by each, and the last order. */
const feed = (batches: readonly (readonly number[])[], from: Order = startOrder()) => {
  let order = from;
  const applied: number[][] = [];
  const gaps: boolean[] = [];
  for (const batch of batches) {
    const result = receive(order, batch.map(log));
    order = result.order;
    applied.push([...ids(result.apply)]);
    gaps.push(result.gap);
  }
  return { order, applied, gaps };
};

describe('receive', () => {
  it.each([
    { name: 'in order', batches: [[1, 2], [3]], applied: [[1, 2], [3]], gaps: [false, false], last: 3 },
    {
      name: 'a duplicate batch (catch-up after a push)',
      batches: [
        [1, 2, 3],
        [2, 3, 4],
      ],
      applied: [[1, 2, 3], [4]],
      gaps: [false, false],
      last: 4,
    },
    {
      name: 'a gap filled by a later batch',
      batches: [[1], [3, 4], [2]],
      applied: [[1], [], [2, 3, 4]],
      gaps: [false, true, false],
      last: 4,
    },
    { name: 'a gap still open', batches: [[1, 2], [5]], applied: [[1, 2], []], gaps: [false, true], last: 2 },
    { name: 'unordered within a batch', batches: [[3, 1, 2]], applied: [[1, 2, 3]], gaps: [false], last: 3 },
    { name: 'the same seq twice in a batch', batches: [[1, 1, 2]], applied: [[1, 2]], gaps: [false], last: 2 },
    { name: 'nothing before 1', batches: [[0, 1]], applied: [[1]], gaps: [false], last: 1 },
  ])('$name', ({ batches, applied, gaps, last }) => {
    // Act
    const result = feed(batches);
    // Assess
    expect(result.applied).toEqual(applied);
    expect(result.gaps).toEqual(gaps);
    expect(result.order.last).toBe(last);
  });

  it('resumes after a given last seq: what came before it is dropped', () => {
    // Prepare
    const order = startOrder(10);
    // Act
    const result = receive(order, [9, 10, 11].map(log));
    // Assess
    expect(ids(result.apply)).toEqual([11]);
  });

  it('ignores an event without an integer seq (an SSE ping)', () => {
    // Act
    const result = receive(startOrder(), [{ id: Number.NaN, event: 'ping', data: {} }, log(1)]);
    // Assess
    expect(ids(result.apply)).toEqual([1]);
    expect(result.gap).toBe(false);
  });

  it('does not change the order it was given', () => {
    // Prepare
    const order = receive(startOrder(), [log(2)]).order;
    // Act
    receive(order, [log(1)]);
    // Assess
    expect([order.last, [...order.held.keys()]]).toEqual([0, [2]]);
  });
});

describe('isEnd', () => {
  it.each([
    ['state_change', 'success', true],
    ['state_change', 'failed', true],
    ['state_change', 'cancelled', true],
    ['state_change', 'rolled_back', true],
    ['state_change', 'running', false],
    ['state_change', 'rolling_back', false],
    ['log', 'success', false],
  ])('%s to %s: %s', (event, state, end) => {
    expect(isEnd({ event, data: { new_state: state } })).toBe(end);
  });
});
