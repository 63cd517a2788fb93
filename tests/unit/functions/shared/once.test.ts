import { describe, expect, it } from 'vitest';
import { cachedFor, once, onceAsync } from '../../../../functions/shared/once.js';

describe('once', () => {
  it('creates on first use only', () => {
    let made = 0;
    const value = once(() => ({ n: (made += 1) }));
    expect(value()).toBe(value());
    expect(made).toBe(1);
  });
});

describe('onceAsync', () => {
  it('shares one creation between concurrent callers', async () => {
    let made = 0;
    const value = onceAsync(async () => (made += 1));
    expect(await Promise.all([value(), value(), value()])).toEqual([1, 1, 1]);
    expect(made).toBe(1);
  });

  it('does not keep a failure: the next call tries again', async () => {
    let calls = 0;
    const value = onceAsync(async () => {
      calls += 1;
      if (calls === 1) throw new Error('transient');
      return 'ready';
    });
    await expect(value()).rejects.toThrow('transient');
    await expect(value()).resolves.toBe('ready');
    await expect(value()).resolves.toBe('ready');
    expect(calls).toBe(2);
  });
});

describe('cachedFor', () => {
  it('answers from its copy until the time is up, then makes it again; a failure is not kept', async () => {
    // Prepare
    let clock = 1_000;
    let calls = 0;
    const value = cachedFor(
      5_000,
      () => clock,
      async () => {
        calls += 1;
        if (calls === 3) throw new Error('transient');
        return calls;
      },
    );
    // Act / Assess: shared while fresh
    expect(await Promise.all([value(), value()])).toEqual([1, 1]);
    clock += 4_999;
    expect(await value()).toBe(1);
    // made again once stale
    clock += 1;
    expect(await value()).toBe(2);
    // a failure is thrown to its caller and not kept
    clock += 5_000;
    await expect(value()).rejects.toThrow('transient');
    expect(await value()).toBe(4);
    expect(calls).toBe(4);
  });
});
