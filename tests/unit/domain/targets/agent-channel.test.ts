import { describe, expect, it } from 'vitest';
import { connectAgent, disconnectAgent, socketHeartbeat } from '../../../../domain/targets/agent-channel.js';
import {
  GONE_AFTER_MS,
  LAUNCH_CONCURRENCY,
  launchCommands,
  noAgentChannel,
  pushAgainTo,
  socketDispatch,
  wakeTarget,
  withWakeUps,
} from '../../../../domain/targets/agent-dispatch.js';
import { createEnrollmentToken, registerAgent } from '../../../../domain/targets/enrollment.js';
import { agentGone, statusOf } from '../../../../domain/targets/status.js';
import { pollCommands } from '../../../../domain/targets/agent-protocol.js';
import type { Command, Target } from '../../../../domain/targets/types.js';
import { PERMISSIONS } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { FakeAgentConnections, targetsFakes } from '../../../fakes/targets.js';

const admin: Caller = {
  kind: 'user',
  userId: 'u1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(PERMISSIONS.map((p) => p.name)),
};

const setup = async () => {
  const fakes = targetsFakes();
  const connections = new FakeAgentConnections();
  const token = await createEnrollmentToken(fakes.deps, admin, { expires_in_hours: 1 });
  const agent = await registerAgent(fakes.deps, {
    enrollment_token: token.token,
    name: 'web-1',
    hostname: 'web-1.local',
    os: 'linux',
    arch: 'x64',
    agent_version: '1.0.0',
    tags: [],
  });
  const deps = { ...fakes.deps, connections };
  return { ...fakes, deps, connections, targetId: agent.target_id, auth: `Bearer ${agent.agent_token}` };
};

const command = (targetId: string, createdAt: string): Command => ({
  id: 'c1',
  targetId,
  deploymentId: 'd1',
  stepId: 's1',
  attempt: 1,
  action: { id: 'a1', slug: 'a', version: '1.0.0' },
  script: 'true',
  interpreter: 'sh',
  variables: {},
  secretVariables: [],
  timeoutSeconds: null,
  status: 'queued',
  createdAt,
  deliveredAt: null,
  cancelRequestedAt: null,
  outputSeq: -1,
  result: null,
});

const at = (iso: string) => new Date(iso);
const target = (
  overrides: Partial<Target>,
): Pick<Target, 'lastHeartbeatAt' | 'connectionId' | 'disconnectedAt' | 'name'> => ({
  name: 'web-1',
  lastHeartbeatAt: '2026-11-22T10:00:00.000Z',
  connectionId: null,
  disconnectedAt: null,
  ...overrides,
});

describe('status with the WebSocket', () => {
  it('judges a connected agent by its heartbeat like any other (decisions.md: online under 60 s): it pings every 25 s', () => {
    // Arrange
    const now = at('2026-11-22T10:06:00.000Z'); // six minutes after the last ping
    // Act / Assess
    expect(statusOf(target({ connectionId: 'conn-1' }), at('2026-11-22T10:00:59.000Z'))).toBe('online');
    // A half-open socket (the host lost power) holds no target online: silent for a minute, it is stale
    expect(statusOf(target({ connectionId: 'conn-1' }), at('2026-11-22T10:01:00.000Z'))).toBe('stale');
    expect(statusOf(target({ connectionId: 'conn-1' }), now)).toBe('offline');
    expect(statusOf(target({}), now)).toBe('offline');
    expect(statusOf(target({}), at('2026-11-22T10:04:00.000Z'))).toBe('stale');
    expect(statusOf(target({ lastHeartbeatAt: null, connectionId: 'conn-1' }), now)).toBe('offline');
  });
});

describe('agentGone: the dead-agent rule', () => {
  const created = '2026-11-22T10:04:00.000Z'; // the command, four minutes after the last ping

  it('gives a connected agent 60 s from the command to answer, then names it', () => {
    // Arrange
    const connected = target({ connectionId: 'conn-1' });
    // Act / Assess
    expect(agentGone(connected, created, at('2026-11-22T10:04:59.000Z'))).toBeUndefined();
    expect(agentGone(connected, created, at('2026-11-22T10:05:00.000Z'))).toMatch(
      /holds a connection but has not answered for 60 s \(last heard from at 2026-11-22T10:00:00.000Z\)/,
    );
  });

  it('fails at once for an agent whose socket closed and that was not heard from for 60 s', () => {
    // Arrange
    const closed = target({ disconnectedAt: '2026-11-22T10:03:00.000Z' });
    // Act / Assess
    expect(agentGone(closed, created, at('2026-11-22T10:04:01.000Z'))).toMatch(
      /disconnected at 2026-11-22T10:03:00.000Z and has not been heard from since/,
    );
  });

  it('keeps a busy agent that heartbeats every 15 s alive, connected or polling', () => {
    // Arrange
    const now = at('2026-11-22T10:10:00.000Z');
    const heard = '2026-11-22T10:09:45.000Z';
    // Act / Assess
    expect(agentGone(target({ lastHeartbeatAt: heard }), created, now)).toBeUndefined();
    expect(agentGone(target({ lastHeartbeatAt: heard, connectionId: 'c' }), created, now)).toBeUndefined();
  });
});

describe('connectAgent / disconnectAgent', () => {
  it('stores the connection, replaces an older one (told and closed), and refuses a bad token', async () => {
    // Arrange
    const { deps, connections, targets, targetId, auth } = await setup();
    // Act
    await connectAgent(deps, auth, 'conn-1');
    await connectAgent(deps, auth, 'conn-2');
    // Assess
    expect((await targets.get(targetId))?.connectionId).toBe('conn-2');
    expect(connections.sent).toEqual([{ connectionId: 'conn-1', message: { type: 'replaced' } }]);
    expect(connections.closed).toEqual(['conn-1']);
    await expect(connectAgent(deps, 'Bearer dpa_wrong', 'conn-3')).rejects.toThrow(/not valid/);
    await expect(connectAgent(deps, 'Bearer dpu_user-token', 'conn-3')).rejects.toThrow(/only agent tokens/);
  });

  it('clears a connection on its disconnect, but not a newer one', async () => {
    // Arrange
    const { deps, targets, targetId, auth } = await setup();
    await connectAgent(deps, auth, 'conn-1');
    await connectAgent(deps, auth, 'conn-2');
    // Act
    await disconnectAgent(deps, 'conn-1');
    const afterOld = await targets.get(targetId);
    await disconnectAgent(deps, 'conn-2');
    // Assess
    expect(afterOld?.connectionId).toBe('conn-2');
    expect((await targets.get(targetId))?.connectionId).toBeNull();
    expect(await disconnectAgent(deps, 'never-was')).toBeUndefined();
  });
});

describe('socketHeartbeat', () => {
  it('records a heartbeat for the connection’s target, and knows no unknown connection', async () => {
    // Arrange
    const { deps, targets, targetId, auth, clock } = await setup();
    await connectAgent(deps, auth, 'conn-1');
    clock.advance(5_000);
    // Act
    const beat = await socketHeartbeat(deps, 'conn-1');
    const unknown = await socketHeartbeat(deps, 'conn-x');
    // Assess
    expect(beat).toBe(targetId);
    expect((await targets.get(targetId))?.lastHeartbeatAt).toBe(clock.now().toISOString());
    expect(unknown).toBeUndefined();
  });
});

describe('wakeTarget and withWakeUps', () => {
  it('pushes a wake-up to the connection; a gone one is cleared only once it is 30 s old', async () => {
    // Arrange
    const { deps, connections, targets, targetId, auth, clock } = await setup();
    await connectAgent(deps, auth, 'conn-1');
    // Act
    const sent = await wakeTarget(deps, targetId);
    connections.gone.add('conn-1');
    const young = await wakeTarget(deps, targetId);
    const keptWhileYoung = (await targets.get(targetId))?.connectionId;
    clock.advance(GONE_AFTER_MS);
    await wakeTarget(deps, targetId);
    // Assess
    expect(sent).toBe(true);
    expect(connections.sent).toEqual([{ connectionId: 'conn-1', message: { type: 'wake' } }]);
    expect(young).toBe(false);
    expect(keptWhileYoung).toBe('conn-1');
    expect((await targets.get(targetId))?.connectionId).toBeNull();
  });

  it('wakes the target after a command is queued and after a cancel notice; a failed push loses nothing', async () => {
    // Arrange
    const { commands, targetId } = await setup();
    const woken: string[] = [];
    const errors: string[] = [];
    let fail = false;
    const wrapped = withWakeUps(
      commands,
      async (id) => {
        if (fail) throw new Error('socket API down');
        woken.push(id);
      },
      (error) => errors.push((error as Error).message),
    );
    const queued = command(targetId, '2026-11-22T10:00:00.000Z');
    // Act
    await wrapped.enqueue(queued);
    await wrapped.requestCancel(queued, new Date());
    fail = true;
    await wrapped.enqueue({ ...queued, id: 'c2' });
    // Assess
    expect(woken).toEqual([targetId, targetId]);
    expect(errors).toEqual(['socket API down']);
    expect((await wrapped.get('c2'))?.status).toBe('queued');
  });
});

describe('target events for webhooks', () => {
  const recorder = (listening: boolean) => {
    const emitted: { type: string; subject: readonly string[]; data: unknown }[] = [];
    const queued: { message: unknown; delay: number | undefined }[] = [];
    return {
      emitted,
      queued,
      webhooks: {
        emitter: {
          listens: async () => listening,
          emit: async (e: { type: string; subject: readonly string[]; data: () => unknown }) =>
            void emitted.push({ type: e.type, subject: e.subject, data: await e.data() }),
        },
        queue: { send: async (message: unknown, delay?: number) => void queued.push({ message, delay }) },
      },
    };
  };

  it('emits target.online when a socket opens on a target that was not online, and asks for a late look when it closes', async () => {
    // Prepare
    const s = await setup();
    s.clock.advance(10 * 60_000); // registered long ago: offline now
    const hooks = recorder(true);
    const deps = { ...s.deps, webhooks: hooks.webhooks };

    // Act
    await connectAgent(deps, s.auth, 'conn-1');
    await connectAgent(deps, s.auth, 'conn-2'); // online already: nothing
    await disconnectAgent(deps, 'conn-2');

    // Assess
    expect(hooks.emitted).toMatchObject([
      { type: 'target.online', subject: [s.targetId, 'conn-1'], data: { id: s.targetId, status: 'online' } },
    ]);
    expect(hooks.queued).toEqual([
      { message: { kind: 'target_check', target_id: s.targetId, connection_id: 'conn-2' }, delay: 75 },
    ]);
  });

  it('emits and sends nothing when nobody listens', async () => {
    const s = await setup();
    s.clock.advance(10 * 60_000);
    const hooks = recorder(false);
    const deps = { ...s.deps, webhooks: hooks.webhooks };
    await connectAgent(deps, s.auth, 'conn-1');
    await disconnectAgent(deps, 'conn-1');
    expect([hooks.emitted, hooks.queued]).toEqual([[], []]);
  });
});

describe('launchCommands and pushAgainTo: commands pushed to the socket', () => {
  const INSTANCE = 'installation-0123456789';
  const launching = async (instance: string | null = INSTANCE) => {
    const setupped = await setup();
    await connectAgent(setupped.deps, setupped.auth, 'conn-1', instance ?? undefined);
    const errors: unknown[] = [];
    const launch = {
      ...setupped.deps,
      cipher: setupped.deps.cipher,
      onError: (error: unknown) => errors.push(error),
    };
    return { ...setupped, launch, errors };
  };
  const agentOf = (s: Awaited<ReturnType<typeof setup>>) => ({
    kind: 'agent' as const,
    targetId: s.targetId,
    tenantId: null,
  });

  it('stores the command claimed for the connection and pushes it; a repeated launch pushes nothing', async () => {
    // Arrange
    const s = await launching();
    const queued = command(s.targetId, s.clock.now().toISOString());
    // Act
    await launchCommands(s.launch, [queued]);
    await launchCommands(s.launch, [queued]);
    // Assess
    const stored = await s.commands.get('c1');
    expect(stored?.status).toBe('delivered');
    expect(stored?.pushedTo).toEqual({ connectionId: 'conn-1', instance: INSTANCE, at: s.clock.now().toISOString() });
    expect(s.connections.sent.map((m) => m.message.type)).toEqual(['command']);
    expect(s.connections.sent[0]?.message).toMatchObject({ type: 'command', command: { id: 'c1', script: 'true' } });
  });

  it('launches a fleet-sized round a bounded number at a time, tries every command, then reports a failure', async () => {
    // Arrange: the store of pushed commands counts what is in flight; one command fails
    const s = await launching();
    let inFlight = 0;
    let most = 0;
    const tried: string[] = [];
    const commands = {
      ...s.commands,
      enqueuePushed: async (c: Command) => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        tried.push(c.id);
        if (c.id === 'c7') throw new Error('the database cannot be reached');
        return false;
      },
    } as unknown as typeof s.launch.commands;
    const round = Array.from({ length: 300 }, (_, i) => ({
      ...command(s.targetId, s.clock.now().toISOString()),
      id: `c${i}`,
    }));
    // Act
    const launched = launchCommands({ ...s.launch, commands }, round);
    // Assess
    await expect(launched).rejects.toThrow('the database cannot be reached');
    expect(most).toBe(LAUNCH_CONCURRENCY);
    expect(tried).toHaveLength(300);
  });

  it('hands an unacknowledged pushed command back to a claim of the same installation only', async () => {
    // Arrange
    const s = await launching();
    await launchCommands(s.launch, [command(s.targetId, s.clock.now().toISOString())]);
    // Act
    const other = await pollCommands(s.deps, agentOf(s), { wait: 0, max: 4, instance: 'another-installation-0000' });
    const old = await pollCommands(s.deps, agentOf(s), { wait: 0, max: 4 });
    const same = await pollCommands(s.deps, agentOf(s), { wait: 0, max: 4, instance: INSTANCE });
    const twice = await pollCommands(s.deps, agentOf(s), { wait: 0, max: 4, instance: INSTANCE });
    // Assess
    expect(other.commands).toEqual([]);
    expect(old.commands).toEqual([]);
    expect(same.commands.map((c) => c.id)).toEqual(['c1']);
    expect(twice.commands).toEqual([]);
  });

  it('queues a command whose push found the connection gone, for any claim, and wakes the target', async () => {
    // Arrange
    const s = await launching();
    s.connections.gone.add('conn-1');
    // Act
    await launchCommands(s.launch, [command(s.targetId, s.clock.now().toISOString())]);
    const claimed = await pollCommands(s.deps, agentOf(s), { wait: 0, max: 4 });
    // Assess
    expect(claimed.commands.map((c) => c.id)).toEqual(['c1']);
  });

  it('queues and wakes instead of pushing: secret variables, an agent without an installation id', async () => {
    // Arrange
    const withSecrets = await launching();
    const older = await launching(null);
    // Act
    await launchCommands(withSecrets.launch, [
      { ...command(withSecrets.targetId, withSecrets.clock.now().toISOString()), secretVariables: ['TOKEN'] },
    ]);
    await launchCommands(older.launch, [command(older.targetId, older.clock.now().toISOString())]);
    // Assess
    for (const s of [withSecrets, older]) {
      expect((await s.commands.get('c1'))?.status).toBe('queued');
      expect(s.connections.sent.map((m) => m.message.type)).toEqual(['wake']);
    }
  });

  it('pushes again only to the same installation, and never queues a command already pushed', async () => {
    // Arrange
    const s = await launching();
    await launchCommands(s.launch, [command(s.targetId, s.clock.now().toISOString())]);
    const pushed = (await s.commands.get('c1'))!;
    // Act
    await pushAgainTo(s.launch, pushed, await s.targets.get(s.targetId));
    await connectAgent(s.deps, s.auth, 'conn-2', 'another-installation-0000');
    await pushAgainTo(s.launch, pushed, await s.targets.get(s.targetId));
    s.connections.gone.add('conn-2');
    await connectAgent(s.deps, s.auth, 'conn-3', INSTANCE);
    s.connections.gone.add('conn-3');
    await pushAgainTo(s.launch, pushed, await s.targets.get(s.targetId));
    // Assess
    expect(s.connections.sent.filter((m) => m.message.type === 'command').map((m) => m.connectionId)).toEqual([
      'conn-1',
      'conn-1',
    ]);
    expect((await s.commands.get('c1'))?.status).toBe('delivered');
  });
});

describe('the AgentDispatch adapters', () => {
  it('socketDispatch revokes a deleted target: the agent told, its connection closed and cleared', async () => {
    // Arrange
    const s = await setup();
    await connectAgent(s.deps, s.auth, 'conn-1');
    const dispatch = socketDispatch({ ...s.deps, onError: () => undefined });
    // Act
    await dispatch.revoke((await s.targets.get(s.targetId))!);
    // Assess
    expect(s.connections.sent).toEqual([{ connectionId: 'conn-1', message: { type: 'revoked' } }]);
    expect(s.connections.closed).toEqual(['conn-1']);
    expect((await s.targets.get(s.targetId))?.connectionId).toBeNull();
  });

  it('noAgentChannel only queues: no wake-up, no push, nothing to revoke', async () => {
    // Arrange
    const s = await setup();
    const dispatch = noAgentChannel(s.commands);
    // Act
    await dispatch.launch([command(s.targetId, s.clock.now().toISOString())]);
    const woken = await dispatch.wake(s.targetId);
    // Assess
    expect(woken).toBe(false);
    expect((await s.commands.get('c1'))?.status).toBe('queued');
    expect(s.connections.sent).toEqual([]);
  });
});
