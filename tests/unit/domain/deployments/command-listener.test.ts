// commandListener: what agents report becomes log events and engine wake-ups; a failed command is sent for analysis.
import { describe, expect, it } from 'vitest';
import {
  commandListener,
  TARGET_NAME_TTL_MS,
  type CommandListenerDeps,
} from '../../../../domain/deployments/command-listener.js';
import type { Command } from '../../../../domain/targets/types.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const aCommand = (overrides: Partial<Command> = {}): Command => ({
  id: 's1-a1',
  targetId: 't1',
  deploymentId: 'd1',
  stepId: 's1',
  attempt: 1,
  action: { id: 'a1', slug: 'hello', version: '1.0.0' },
  script: 'echo hi',
  interpreter: 'bash',
  variables: {},
  secretVariables: [],
  timeoutSeconds: null,
  status: 'delivered',
  createdAt: '2026-11-27T10:00:00.000Z',
  deliveredAt: '2026-11-27T10:00:00.000Z',
  cancelRequestedAt: null,
  outputSeq: -1,
  result: null,
  ...overrides,
});

const world = (overrides: Partial<CommandListenerDeps> = {}) => {
  const clock = new FakeClock(new Date('2026-11-27T10:00:00.000Z'));
  const events = new FakeDeploymentEventStore();
  const woken: string[] = [];
  const named: (string | undefined)[] = [];
  const names: string[] = [];
  const analysed: string[] = [];
  const lost: string[] = [];
  let name = 'web-1';
  const deps: CommandListenerDeps = {
    events,
    engine: {
      wake: async (id, options) => {
        woken.push(id);
        named.push(options?.commandId);
      },
    },
    clock,
    targetName: async (targetId) => {
      names.push(targetId);
      return name;
    },
    analyze: async (command) => void analysed.push(command.id),
    analysisLost: (command) => void lost.push(command.id),
    ...overrides,
  };
  return {
    listener: commandListener(deps),
    clock,
    events,
    woken,
    named,
    names,
    analysed,
    lost,
    rename: (n: string) => (name = n),
  };
};

const logLines = (events: FakeDeploymentEventStore) =>
  (events.events.get('d1') ?? [])
    .map((e) => e.event as { log: { message: string; target_name: string } })
    .map((e) => `${e.log.target_name} ${e.log.message}`);

describe('commandListener', () => {
  it('appends each line once per (command, seq), reading the target name once a minute', async () => {
    // Prepare
    const { listener, clock, events, names, rename } = world();
    const chunk = { seq: 0, stream: 'stdout' as const, data: 'one\ntwo\n' };
    // Act
    await listener.output(aCommand(), [chunk]);
    await listener.output(aCommand(), [chunk]);
    rename('web-renamed');
    await listener.output(aCommand(), [{ ...chunk, seq: 1, data: 'three\n' }]);
    clock.advance(TARGET_NAME_TTL_MS + 1);
    await listener.output(aCommand(), [{ ...chunk, seq: 2, data: 'four\n' }]);
    // Assess
    expect(logLines(events)).toEqual(['web-1 one', 'web-1 two', 'web-1 three', 'web-renamed four']);
    expect(names).toEqual(['t1', 't1']);
  });

  it('takes the name stored on the command without reading the target', async () => {
    const { listener, events, names } = world();
    await listener.output(aCommand({ targetName: 'stored' }), [{ seq: 0, stream: 'stdout', data: 'hi\n' }]);
    expect([logLines(events), names]).toEqual([['stored hi'], []]);
  });

  it('wakes the engine for every completion, naming the command, and asks for analysis only of a failed one', async () => {
    const { listener, woken, named, analysed } = world();
    const result = { startedAt: '2026-11-27T10:00:00.000Z', completedAt: '2026-11-27T10:00:01.000Z' };
    await listener.completed(aCommand({ id: 'ok', result: { ...result, exitCode: 0 } as Command['result'] }));
    await listener.completed(aCommand({ id: 'bad', result: { ...result, exitCode: 2 } as Command['result'] }));
    await listener.completedAgain?.(aCommand({ id: 'again', result: { ...result, exitCode: 0 } as Command['result'] }));
    expect([woken, named, analysed]).toEqual([['d1', 'd1', 'd1'], ['ok', 'bad', 'again'], ['bad']]);
  });

  it('wakes the engine again for a repeated report of a failed command, without a second analysis', async () => {
    const { listener, woken, analysed } = world();
    const result = { exitCode: 2, startedAt: '2026-11-27T10:00:00.000Z', completedAt: '2026-11-27T10:00:01.000Z' };
    const done = aCommand({ id: 'bad', status: 'completed', result: result as Command['result'] });
    await listener.completed(done);
    await listener.completedAgain?.(done);
    expect([woken, analysed]).toEqual([['d1', 'd1'], ['bad']]);
  });

  it('answers a completion whose analysis request is lost, and says so', async () => {
    const { listener, woken, lost } = world({
      analyze: async () => {
        throw new Error('queue down');
      },
    });
    const result = { exitCode: 1, startedAt: '2026-11-27T10:00:00.000Z', completedAt: '2026-11-27T10:00:01.000Z' };
    await expect(listener.completed(aCommand({ result: result as Command['result'] }))).resolves.toBeUndefined();
    expect([woken, lost]).toEqual([['d1'], ['s1-a1']]);
  });

  it('asks for no analysis when none is configured', async () => {
    const { listener, woken } = world({ analyze: undefined });
    const result = { exitCode: 1, startedAt: '2026-11-27T10:00:00.000Z', completedAt: '2026-11-27T10:00:01.000Z' };
    await listener.completed(aCommand({ result: result as Command['result'] }));
    expect(woken).toEqual(['d1']);
  });
});
