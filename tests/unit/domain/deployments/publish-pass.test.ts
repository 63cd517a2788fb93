// publishPass: a pass's events reach the event store once, a finished step's step_update carrying its output tail.
import { describe, expect, it } from 'vitest';
import { commandIdOf } from '../../../../domain/deployments/engine.js';
import { OUTPUT_TAIL } from '../../../../domain/deployments/publish.js';
import { publishPass } from '../../../../domain/deployments/publish-pass.js';
import type { Command, StoredChunk } from '../../../../domain/targets/types.js';
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

  it('takes the tail a completion stored on the current attempt’s command instead of reading its output', async () => {
    // Prepare
    const step = { ...aPlan().steps[0]!, state: 'completed' as const, retryCount: 0, exitCode: 0 };
    const read: string[] = [];
    const output = async (commandId: string): Promise<readonly StoredChunk[]> => {
      read.push(commandId);
      return [{ seq: 0, stream: 'stdout', data: 'from the chunks', receivedAt: '' }];
    };
    const store = new FakeDeploymentEventStore();
    const deps = { commands: { output }, events: store, clock: new FakeClock(new Date('2026-11-22T10:00:00.000Z')) };
    const command = (attempt: number, outputTail: string) =>
      ({ id: commandIdOf(step.id, attempt), stepId: step.id, attempt, outputTail }) as Command;
    // Act: the stored tail of attempt 1 is used; a tail of another attempt is not
    await publishPass(deps, 'd1', [{ type: 'step_update', step }], 3, new Map([[step.id, command(1, 'stored')]]));
    const retried = { ...step, retryCount: 1 };
    await publishPass(deps, 'd2', [{ type: 'step_update', step: retried }], 3, new Map([[step.id, command(1, 'old')]]));
    // Assess
    const outputs = (id: string) => (store.events.get(id) ?? []).map((e) => (e.event as { output: unknown }).output);
    expect([outputs('d1'), outputs('d2')]).toEqual([['stored'], ['from the chunks']]);
    expect(read).toEqual([commandIdOf(step.id, 2)]);
  });
});
