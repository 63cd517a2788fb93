// publishPass: a pass's events reach the event store once, a finished step's step_update carrying its output tail.
import { describe, expect, it } from 'vitest';
import { commandIdOf } from '../../../../domain/deployments/engine.js';
import { OUTPUT_TAIL } from '../../../../domain/deployments/publish.js';
import { publishPass } from '../../../../domain/deployments/publish-pass.js';
import type { StoredChunk } from '../../../../domain/targets/types.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aPlan } from '../../../fakes/deployments.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

describe('publishPass', () => {
  it('appends the events once per transition, a finished step with the tail of its current attempt’s output', async () => {
    // Prepare
    const step = { ...aPlan().steps[0]!, state: 'failed' as const, retryCount: 1, exitCode: 1 };
    const running = { ...step, id: 'other', state: 'running' as const };
    const read: string[] = [];
    const output = async (commandId: string): Promise<readonly StoredChunk[]> => {
      read.push(commandId);
      return [{ seq: 0, stream: 'stdout', data: 'x'.repeat(OUTPUT_TAIL) + 'end', receivedAt: '' }];
    };
    const store = new FakeDeploymentEventStore();
    const deps = { commands: { output }, events: store, clock: new FakeClock(new Date('2026-11-22T10:00:00.000Z')) };
    const events = [
      { type: 'step_update' as const, step },
      { type: 'step_update' as const, step: running },
    ];
    // Act
    await publishPass(deps, 'd1', events, 3);
    await publishPass(deps, 'd1', events, 3);
    // Assess
    const stored = store.events.get('d1') ?? [];
    expect(read).toEqual([commandIdOf(step.id, 2), commandIdOf(step.id, 2)]);
    expect(stored.map((e) => e.event)).toEqual([
      expect.objectContaining({ type: 'step_update', step_id: step.id, output: 'x'.repeat(OUTPUT_TAIL - 3) + 'end' }),
      expect.objectContaining({ type: 'step_update', step_id: 'other', output: null }),
    ]);
  });
});
