import { describe, expect, it } from 'vitest';
import {
  appendOutput,
  authenticateAgent,
  completeCommand,
  pollCommands,
} from '../../../../domain/targets/agent-protocol.js';
import { sealVariable } from '../../../../domain/shared/variable-secrets.js';
import {
  cancelCommand,
  enqueueCommand,
  INLINE_OUTPUT_BYTES,
  type NewCommand,
} from '../../../../domain/targets/commands.js';
import { createEnrollmentToken, registerAgent } from '../../../../domain/targets/enrollment.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { targetsFakes } from '../../../fakes/targets.js';

const admin: Caller = {
  kind: 'user',
  userId: 'u1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(['targets:create']),
};
const host = { hostname: 'h', os: 'linux', arch: 'x64', agent_version: '1.0.0', tags: [] };

const twoAgents = async () => {
  const fakes = targetsFakes();
  const { token } = await createEnrollmentToken(fakes.deps, admin, { max_uses: 2 });
  const one = await registerAgent(fakes.deps, { ...host, name: 'one', enrollment_token: token });
  const two = await registerAgent(fakes.deps, { ...host, name: 'two', enrollment_token: token });
  const agentOne = await authenticateAgent(fakes.deps, `Bearer ${one.agent_token}`);
  const agentTwo = await authenticateAgent(fakes.deps, `Bearer ${two.agent_token}`);
  const command = (targetId: string, overrides: Partial<NewCommand> = {}): NewCommand => ({
    targetId,
    deploymentId: 'd1',
    stepId: 's1',
    attempt: 1,
    action: { id: 'a1', slug: 'hello', version: '1.0.0' },
    script: 'echo hi',
    interpreter: 'sh',
    variables: { GREETING: 'hi', TOKEN: 's3cret' },
    secretVariables: ['TOKEN'],
    timeoutSeconds: 30,
    ...overrides,
  });
  return { ...fakes, agentOne, agentTwo, command };
};

const times = { started_at: '2026-11-22T10:00:00.000Z', completed_at: '2026-11-22T10:00:01.000Z' };

describe('pollCommands', () => {
  it('waits the whole wait when there is nothing, then answers empty', async () => {
    const { deps, clock, agentOne } = await twoAgents();
    const before = clock.now().getTime();
    expect(await pollCommands(deps, agentOne, { wait: 20, max: 4 })).toEqual({ commands: [], cancel: [] });
    expect(clock.now().getTime() - before).toBe(20_000);
  });

  it('hands a command to its own target only, once, with everything needed to run it', async () => {
    // Prepare
    const { deps, agentOne, agentTwo, command } = await twoAgents();
    const queued = await enqueueCommand(deps, command(agentOne.targetId));
    // Act
    const other = await pollCommands(deps, agentTwo, { wait: 0, max: 4 });
    const mine = await pollCommands(deps, agentOne, { wait: 0, max: 4 });
    const again = await pollCommands(deps, agentOne, { wait: 0, max: 4 });
    // Assess
    expect(other.commands).toEqual([]);
    expect(mine.commands).toEqual([
      {
        id: queued.id,
        deployment_id: 'd1',
        step_id: 's1',
        attempt: 1,
        action: { id: 'a1', slug: 'hello', version: '1.0.0' },
        script: 'echo hi',
        interpreter: 'sh',
        variables: { GREETING: 'hi', TOKEN: 's3cret' },
        secret_variables: ['TOKEN'],
        timeout_seconds: 30,
        created_at: queued.createdAt,
      },
    ]);
    expect(again.commands).toEqual([]);
  });

  it('keeps sealed secret values sealed in the record and opens them only in the answer to the claiming agent', async () => {
    // Prepare
    const { deps, agentOne, command, commands } = await twoAgents();
    const sealed = sealVariable(deps.cipher, 's3cret');
    const queued = await enqueueCommand(
      deps,
      command(agentOne.targetId, { variables: { NOTE: 'enc:x', TOKEN: sealed }, sealedSecrets: true }),
    );
    // Act
    const mine = await pollCommands(deps, agentOne, { wait: 0, max: 4 });
    // Assess
    expect(JSON.stringify(await commands.get(queued.id))).not.toContain('s3cret');
    expect(mine.commands[0]?.variables).toEqual({ NOTE: 'enc:x', TOKEN: 's3cret' });
  });

  it('gives at most `max` commands and, with max 0, only cancel notices', async () => {
    const { deps, agentOne, command } = await twoAgents();
    for (let i = 0; i < 3; i += 1) await enqueueCommand(deps, command(agentOne.targetId, { stepId: `s${i}` }));
    expect((await pollCommands(deps, agentOne, { wait: 0, max: 2 })).commands).toHaveLength(2);
    expect((await pollCommands(deps, agentOne, { wait: 0, max: 0 })).commands).toHaveLength(0);
    expect((await pollCommands(deps, agentOne, { wait: 0, max: 2 })).commands).toHaveLength(1);
  });
});

describe('output and completion', () => {
  const delivered = async () => {
    const fakes = await twoAgents();
    const queued = await enqueueCommand(fakes.deps, fakes.command(fakes.agentOne.targetId));
    await pollCommands(fakes.deps, fakes.agentOne, { wait: 0, max: 1 });
    return { ...fakes, id: queued.id };
  };

  it('stores each seq once, so a retried batch is harmless', async () => {
    const { deps, agentOne, commands, id } = await delivered();
    const batch = [
      { stream: 'stdout' as const, data: 'a', seq: 0 },
      { stream: 'stderr' as const, data: 'b', seq: 1 },
    ];
    expect(await appendOutput(deps, agentOne, id, batch)).toEqual({ accepted: 2, cancel_requested: false });
    expect(await appendOutput(deps, agentOne, id, batch)).toEqual({ accepted: 0, cancel_requested: false });
    expect((await commands.output(id)).map((c) => c.data)).toEqual(['a', 'b']);
  });

  it('never lets an agent touch another target’s command (404)', async () => {
    const { deps, agentTwo, id } = await delivered();
    await expect(appendOutput(deps, agentTwo, id, [{ stream: 'stdout', data: 'x', seq: 0 }])).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(completeCommand(deps, agentTwo, id, { exit_code: 0, ...times })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('completes once; a repeated report answers the same; later output is refused unless a retry', async () => {
    const { deps, agentOne, commands, id } = await delivered();
    await appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'a', seq: 0 }]);
    expect(await completeCommand(deps, agentOne, id, { exit_code: 3, ...times, error_message: 'boom' })).toEqual({
      id,
      status: 'completed',
    });
    expect(await completeCommand(deps, agentOne, id, { exit_code: 3, ...times })).toEqual({ id, status: 'completed' });
    expect((await commands.get(id))?.result).toEqual({
      exitCode: 3,
      ...{ startedAt: times.started_at, completedAt: times.completed_at },
      errorMessage: 'boom',
    });
    expect(await appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'a', seq: 0 }])).toEqual({
      accepted: 0,
      cancel_requested: false,
    });
    await expect(appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'late', seq: 1 }])).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('stores the output tail with a completion that carries all of the output, or none at all', async () => {
    // Prepare: three commands; only the third had output posted before its completion
    const fakes = await twoAgents();
    const ids: string[] = [];
    for (const stepId of ['s1', 's2', 's3'])
      ids.push((await enqueueCommand(fakes.deps, fakes.command(fakes.agentOne.targetId, { stepId }))).id);
    await pollCommands(fakes.deps, fakes.agentOne, { wait: 0, max: 3 });
    const [carried, silent, posted] = ids as [string, string, string];
    await appendOutput(fakes.deps, fakes.agentOne, posted, [{ stream: 'stdout', data: 'early\n', seq: 0 }]);
    // Act
    await completeCommand(fakes.deps, fakes.agentOne, carried, {
      exit_code: 0,
      ...times,
      output: [
        { stream: 'stderr', data: 'b'.repeat(1500), seq: 1 },
        { stream: 'stdout', data: 'a'.repeat(1500), seq: 0 },
      ],
    });
    await completeCommand(fakes.deps, fakes.agentOne, silent, { exit_code: 0, ...times });
    await completeCommand(fakes.deps, fakes.agentOne, posted, {
      exit_code: 0,
      ...times,
      output: [{ stream: 'stdout', data: 'late\n', seq: 1 }],
    });
    // Assess: both streams in seq order, the last OUTPUT_TAIL characters; none where output came before
    const tails = await Promise.all(ids.map(async (id) => (await fakes.commands.get(id))?.outputTail));
    expect(tails).toEqual(['a'.repeat(500) + 'b'.repeat(1500), '', undefined]);
    expect((await fakes.commands.get(posted))?.status).toBe('completed');
    expect((await fakes.commands.output(posted)).map((c) => c.data)).toEqual(['early\n', 'late\n']);
  });

  it('stores a short command’s whole output in its completing write, beside its log lines; a long one as chunks', async () => {
    // Prepare: a listener that records the lines it is given; the repository's writes counted
    const fakes = await twoAgents();
    const logged: string[] = [];
    const listener = {
      output: async (_command: unknown, chunks: readonly { data: string }[]) =>
        void logged.push(...chunks.map((c) => c.data)),
      completed: async () => undefined,
    };
    const chunkWrites: string[] = [];
    const appendChunks = fakes.commands.appendOutput.bind(fakes.commands);
    const commands = Object.assign(Object.create(fakes.commands) as typeof fakes.commands, {
      appendOutput: async (...args: Parameters<typeof fakes.commands.appendOutput>) => {
        chunkWrites.push(args[0].id);
        return appendChunks(...args);
      },
    });
    const deps = { ...fakes.deps, commands, listener };
    const short = (await enqueueCommand(deps, fakes.command(fakes.agentOne.targetId, { stepId: 's1' }))).id;
    const long = (await enqueueCommand(deps, fakes.command(fakes.agentOne.targetId, { stepId: 's2' }))).id;
    await pollCommands(deps, fakes.agentOne, { wait: 0, max: 2 });
    const big = 'x'.repeat(INLINE_OUTPUT_BYTES);
    // Act
    await completeCommand(deps, fakes.agentOne, short, {
      exit_code: 0,
      ...times,
      output: [{ stream: 'stdout', data: 'ok\n', seq: 0 }],
    });
    await completeCommand(deps, fakes.agentOne, long, {
      exit_code: 0,
      ...times,
      output: [{ stream: 'stdout', data: big + '\n', seq: 0 }],
    });
    // Assess: no chunk write for the short one; both outputs read back whole, both logged, both tails stored
    expect(chunkWrites).toEqual([long]);
    expect((await fakes.commands.output(short)).map((c) => c.data)).toEqual(['ok\n']);
    expect((await fakes.commands.output(long)).map((c) => c.data)).toEqual([big + '\n']);
    expect(logged).toEqual(['ok\n', big + '\n']);
    expect((await fakes.commands.get(short))?.outputTail).toBe('ok\n');
    expect((await fakes.commands.get(long))?.outputSeq).toBe(0);
  });

  it('completes a short command in its completing write alone (no read), its log lines appended after it', async () => {
    // Prepare: the repository's reads counted; a listener that records what it is given and when
    const fakes = await twoAgents();
    const order: string[] = [];
    const reads: string[] = [];
    const get = fakes.commands.get.bind(fakes.commands);
    const completeAs = fakes.commands.completeAs.bind(fakes.commands);
    const commands = Object.assign(Object.create(fakes.commands) as typeof fakes.commands, {
      get: async (id: string) => {
        reads.push(id);
        return get(id);
      },
      completeAs: async (...args: Parameters<typeof fakes.commands.completeAs>) => {
        order.push('complete');
        return completeAs(...args);
      },
    });
    const listener = {
      output: async (command: { status: string }, chunks: readonly { data: string }[]) =>
        void order.push(`log ${command.status} ${chunks.map((c) => c.data).join('')}`),
      completed: async (command: { status: string; result: unknown }) =>
        void order.push(`woken ${command.status} ${JSON.stringify(command.result)}`),
    };
    const deps = { ...fakes.deps, commands, listener };
    const id = (await enqueueCommand(deps, fakes.command(fakes.agentOne.targetId))).id;
    await pollCommands(deps, fakes.agentOne, { wait: 0, max: 1 });
    reads.length = 0;
    // Act
    const answer = await completeCommand(deps, fakes.agentOne, id, {
      exit_code: 0,
      ...times,
      output: [{ stream: 'stdout', data: 'ok\n', seq: 0 }],
    });
    // Assess
    expect(answer).toEqual({ id, status: 'completed' });
    expect(reads).toEqual([]);
    expect(order).toEqual([
      'complete',
      'log completed ok\n',
      `woken completed ${JSON.stringify({ exitCode: 0, startedAt: times.started_at, completedAt: times.completed_at, errorMessage: null })}`,
    ]);
    expect(await fakes.commands.get(id)).toMatchObject({ status: 'completed', outputSeq: 0, outputTail: 'ok\n' });
    // Another agent's completion of it is refused as if it did not exist, and changes nothing
    await expect(completeCommand(deps, fakes.agentTwo, id, { exit_code: 1, ...times })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await fakes.commands.get(id))?.result?.exitCode).toBe(0);
  });

  it('hands output to the log (the listener) while its chunks are written, and answers once both are done', async () => {
    // Prepare: a chunk write held until released, a listener that records when it is called
    const { deps, agentOne, commands, id } = await delivered();
    const order: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const appendChunks = commands.appendOutput.bind(commands);
    const slowCommands = Object.assign(Object.create(commands) as typeof commands, {
      appendOutput: async (...args: Parameters<typeof commands.appendOutput>) => {
        await held;
        order.push('chunks');
        return appendChunks(...args);
      },
    });
    const listener = {
      output: async () => void order.push('log'),
      completed: async () => undefined,
    };
    // Act
    const answer = appendOutput({ ...deps, commands: slowCommands, listener }, agentOne, id, [
      { stream: 'stdout', data: 'a', seq: 0 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const before = [...order];
    release();
    // Assess
    expect(before).toEqual(['log']);
    expect(await answer).toEqual({ accepted: 1, cancel_requested: false });
    expect(order).toEqual(['log', 'chunks']);
  });

  it('takes the last output with the completion: stored first, once, also when the report is repeated', async () => {
    // Prepare
    const { deps, agentOne, commands, id } = await delivered();
    await appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'a', seq: 0 }]);
    const report = { exit_code: 0, ...times, output: [{ stream: 'stderr' as const, data: 'b', seq: 1 }] };
    // Act
    const first = await completeCommand(deps, agentOne, id, report);
    const again = await completeCommand(deps, agentOne, id, report);
    // Assess
    expect(first).toEqual({ id, status: 'completed' });
    expect(again).toEqual({ id, status: 'completed' });
    expect((await commands.output(id)).map((c) => c.data)).toEqual(['a', 'b']);
    expect((await commands.get(id))?.status).toBe('completed');
    // New output with a repeated report of a completed command is refused, as on its own
    await expect(
      completeCommand(deps, agentOne, id, { ...report, output: [{ stream: 'stdout', data: 'late', seq: 2 }] }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('wakes the engine again when a completed command is reported again (its first answer may have been lost)', async () => {
    // Prepare: a listener that records what it is told
    const fakes = await twoAgents();
    const told: string[] = [];
    const listener = {
      output: async () => undefined,
      completed: async (command: { id: string }) => void told.push(`completed ${command.id}`),
      completedAgain: async (command: { id: string; status: string }) =>
        void told.push(`again ${command.id} ${command.status}`),
    };
    const deps = { ...fakes.deps, listener };
    const id = (await enqueueCommand(deps, fakes.command(fakes.agentOne.targetId))).id;
    await pollCommands(deps, fakes.agentOne, { wait: 0, max: 1 });
    const report = { exit_code: 0, ...times, output: [{ stream: 'stdout' as const, data: 'ok\n', seq: 0 }] };
    // Act
    const first = await completeCommand(deps, fakes.agentOne, id, report);
    const again = await completeCommand(deps, fakes.agentOne, id, report);
    // Assess
    expect([first, again]).toEqual([
      { id, status: 'completed' },
      { id, status: 'completed' },
    ]);
    expect(told).toEqual([`completed ${id}`, `again ${id} completed`]);
  });

  it('completes with output already counted (a retried batch in the report): the completion alone is written', async () => {
    // Prepare
    const { deps, agentOne, commands, id } = await delivered();
    await appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'a', seq: 0 }]);
    // Act
    const done = await completeCommand(deps, agentOne, id, {
      exit_code: 0,
      ...times,
      output: [{ stream: 'stdout', data: 'a', seq: 0 }],
    });
    // Assess
    expect(done).toEqual({ id, status: 'completed' });
    expect((await commands.get(id))?.outputSeq).toBe(0);
    expect((await commands.output(id)).map((c) => c.data)).toEqual(['a']);
  });

  it('cancels a queued command outright and tells the agent to stop a delivered one', async () => {
    const { deps, agentOne, command, id } = await delivered();
    const waiting = await enqueueCommand(deps, command(agentOne.targetId, { stepId: 's2' }));
    await cancelCommand(deps, waiting.id);
    await cancelCommand(deps, id);
    expect(await pollCommands(deps, agentOne, { wait: 0, max: 0 })).toEqual({ commands: [], cancel: [id] });
    expect(await pollCommands(deps, agentOne, { wait: 0, max: 4 })).toEqual({ commands: [], cancel: [] });
    expect(await appendOutput(deps, agentOne, id, [{ stream: 'stdout', data: 'x', seq: 0 }])).toMatchObject({
      cancel_requested: true,
    });
    await expect(completeCommand(deps, agentOne, waiting.id, { exit_code: 0, ...times })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });
});

describe('liveness', () => {
  it('counts a poll and a completion as a sign of life, like a heartbeat', async () => {
    const { deps, clock, agentOne, targets } = await twoAgents();
    clock.advance(120_000);
    await pollCommands(deps, agentOne, { wait: 0, max: 1 });
    expect((await targets.get(agentOne.targetId))?.lastHeartbeatAt).toBe(clock.now().toISOString());
  });

  it('counts a completion as a sign of life unless the agent keeps its own cadence (sign_of_life false)', async () => {
    // Prepare: two delivered commands; the agents last heard from at registration, 2 minutes ago
    const fakes = await twoAgents();
    const ids: string[] = [];
    for (const stepId of ['s1', 's2'])
      ids.push((await enqueueCommand(fakes.deps, fakes.command(fakes.agentOne.targetId, { stepId }))).id);
    await pollCommands(fakes.deps, fakes.agentOne, { wait: 0, max: 2 });
    const polled = (await fakes.targets.get(fakes.agentOne.targetId))?.lastHeartbeatAt;
    fakes.clock.advance(120_000);
    // Act: a completion of today's agents, then one of an agent from before 2026-11-29 (no sign_of_life)
    await completeCommand(fakes.deps, fakes.agentOne, ids[0]!, { exit_code: 0, ...times, sign_of_life: false });
    const afterOwnCadence = (await fakes.targets.get(fakes.agentOne.targetId))?.lastHeartbeatAt;
    await completeCommand(fakes.deps, fakes.agentOne, ids[1]!, { exit_code: 0, ...times });
    // Assess
    expect(afterOwnCadence).toBe(polled);
    expect((await fakes.targets.get(fakes.agentOne.targetId))?.lastHeartbeatAt).toBe(fakes.clock.now().toISOString());
  });

  it('writes a burst of signs of life once per 5 s', async () => {
    // Prepare: a poll writes the sign of life at T
    const { deps, clock, targets, agentOne } = await twoAgents();
    clock.advance(120_000);
    await pollCommands(deps, agentOne, { wait: 0, max: 1 });
    const at = clock.now().toISOString();
    const caller = async () => ({ ...agentOne, heardAt: (await targets.get(agentOne.targetId))?.lastHeartbeatAt });
    // Act: 4 s later (authenticated again, so it knows T) and then 6 s after T
    clock.advance(4_000);
    await pollCommands(deps, await caller(), { wait: 0, max: 1 });
    const within = (await targets.get(agentOne.targetId))?.lastHeartbeatAt;
    clock.advance(2_000);
    await pollCommands(deps, await caller(), { wait: 0, max: 1 });
    // Assess
    expect(within).toBe(at);
    expect((await targets.get(agentOne.targetId))?.lastHeartbeatAt).toBe(clock.now().toISOString());
  });
});
