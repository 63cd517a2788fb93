import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../../domain/targets/types.js';
import { DynamoCommandRepository } from '../../../../infra/dynamodb/command-repository.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTargetRepository } from '../../../../infra/dynamodb/target-repository.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('commands');
const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client);
const commands = new DynamoCommandRepository(db, table);
const targets = new DynamoTargetRepository(db, table);
let n = 0;

const aCommand = (targetId: string, overrides: Partial<Command> = {}): Command => {
  n += 1;
  return {
    id: `c-${n}`,
    targetId,
    deploymentId: 'd1',
    stepId: `s${n}`,
    attempt: 1,
    action: { id: 'a1', slug: 'hello', version: '1.0.0' },
    script: 'echo hi',
    interpreter: 'sh',
    variables: { A: '1' },
    secretVariables: [],
    timeoutSeconds: null,
    status: 'queued',
    createdAt: new Date(Date.UTC(2026, 10, 22, 10, 0, n)).toISOString(),
    deliveredAt: null,
    cancelRequestedAt: null,
    outputSeq: -1,
    result: null,
    ...overrides,
  };
};

/** A successful result, and two commands of one target delivered (claimed). */
const done = {
  exitCode: 0,
  startedAt: '2026-11-22T10:00:00.000Z',
  completedAt: '2026-11-22T10:00:01.000Z',
  errorMessage: null,
};
const twoDelivered = async (targetId: string): Promise<[Command, Command]> => {
  const pair: [Command, Command] = [aCommand(targetId), aCommand(targetId)];
  for (const c of pair) await commands.enqueue(c);
  await commands.claimInbox(targetId, 2, new Date());
  return pair;
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoCommandRepository', () => {
  it('delivers each queued command to exactly one of many concurrent polls, oldest first', async () => {
    // Prepare
    const queued = [aCommand('t-race'), aCommand('t-race'), aCommand('t-race')];
    for (const c of queued) await commands.enqueue(c);
    await commands.enqueue(aCommand('t-elsewhere'));
    // Act
    const polls = await Promise.all(Array.from({ length: 10 }, () => commands.claimInbox('t-race', 4, new Date())));
    // Assess
    const delivered = polls.flatMap((p) => p.commands.map((c) => c.id));
    expect(delivered.sort()).toEqual(queued.map((c) => c.id).sort());
    expect((await commands.get(queued[0]!.id))?.status).toBe('delivered');
    expect((await commands.claimInbox('t-race', 4, new Date())).commands).toEqual([]);
  });

  it('stores output once per seq, in seq order, and raises outputSeq', async () => {
    const command = aCommand('t-out');
    await commands.enqueue(command);
    const [delivered] = (await commands.claimInbox('t-out', 1, new Date())).commands;
    const chunks = [
      { stream: 'stdout' as const, data: 'one', seq: 0 },
      { stream: 'stderr' as const, data: 'two', seq: 1 },
    ];
    expect(await commands.appendOutput(delivered!, chunks, new Date())).toHaveLength(2);
    expect(
      (
        await commands.appendOutput(delivered!, [...chunks, { stream: 'stdout', data: 'three', seq: 2 }], new Date())
      ).map((c) => c.seq),
    ).toEqual([2]);
    expect((await commands.output(command.id)).map((c) => [c.seq, c.stream, c.data])).toEqual([
      [0, 'stdout', 'one'],
      [1, 'stderr', 'two'],
      [2, 'stdout', 'three'],
    ]);
    expect((await commands.get(command.id))?.outputSeq).toBe(2);
  });

  it('completes a delivered command once', async () => {
    const command = aCommand('t-done');
    await commands.enqueue(command);
    await commands.claimInbox('t-done', 1, new Date());
    const result = {
      exitCode: 0,
      startedAt: '2026-11-22T10:00:00.000Z',
      completedAt: '2026-11-22T10:00:01.000Z',
      errorMessage: null,
    };
    const outcomes = await Promise.all([
      commands.complete(command.id, result),
      commands.complete(command.id, { ...result, exitCode: 1 }),
    ]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect((await commands.get(command.id))?.status).toBe('completed');
  });

  it('stores an output tail with the completion only while no other output came (outputSeq as read)', async () => {
    // Prepare: two delivered commands; the second gets output after its completion read outputSeq -1
    const [kept, raced] = await twoDelivered('t-tail');
    await commands.appendOutput((await commands.get(raced.id))!, [{ stream: 'stdout', data: 'x', seq: 0 }], new Date());
    // Act
    const stored = await commands.complete(kept.id, done, undefined, { tail: 'all of it', seqWas: -1 });
    const refused = await commands.complete(raced.id, done, undefined, { tail: '', seqWas: -1 });
    // Assess
    expect([stored, refused]).toEqual([true, false]);
    expect(await commands.get(kept.id)).toMatchObject({ status: 'completed', outputTail: 'all of it' });
    expect(await commands.get(raced.id)).toMatchObject({ status: 'delivered' });
    expect((await commands.get(raced.id))?.outputTail).toBeUndefined();
    expect((await commands.listByDeployment('d1')).find((c) => c.id === kept.id)?.outputTail).toBe('all of it');
  });

  it('answers output stored inline by the completion with the chunk items, in seq order, once per seq', async () => {
    // Prepare
    const [inline, mixed] = await twoDelivered('t-inline');
    const carried = [
      { stream: 'stdout' as const, data: 'one\n', seq: 0 },
      { stream: 'stderr' as const, data: 'two\n', seq: 1 },
    ];
    // A completion refused (its outputSeq condition) leaves nothing inline; the chunk items then hold the output
    await commands.appendOutput((await commands.get(mixed.id))!, [carried[0]!], new Date());
    // Act
    const stored = await commands.complete(inline.id, done, 1, { tail: 'one\ntwo\n', seqWas: -1, chunks: carried });
    const refused = await commands.complete(mixed.id, done, 1, { tail: 'x', seqWas: -1, chunks: carried });
    // Assess
    expect([stored, refused]).toEqual([true, false]);
    expect((await commands.output(inline.id)).map((c) => [c.seq, c.stream, c.data, c.receivedAt])).toEqual([
      [0, 'stdout', 'one\n', done.completedAt],
      [1, 'stderr', 'two\n', done.completedAt],
    ]);
    expect((await commands.output(mixed.id)).map((c) => c.data)).toEqual(['one\n']);
    const read = await commands.get(inline.id);
    expect(read).toMatchObject({ status: 'completed', outputSeq: 1, outputTail: 'one\ntwo\n' });
    expect(read).not.toHaveProperty('inlineOutput');
  });

  it('completes without a read first only for its own target, answering the command as it now is or as it was', async () => {
    // Prepare: three delivered commands of one target; the third got output before its completion
    const [own, foreign] = await twoDelivered('t-as');
    const [posted] = await twoDelivered('t-as');
    await commands.appendOutput(
      (await commands.get(posted.id))!,
      [{ stream: 'stdout', data: 'x', seq: 0 }],
      new Date(),
    );
    const carried = [{ stream: 'stdout' as const, data: 'hi\n', seq: 0 }];
    const whole = { tail: 'hi\n', seqWas: -1, chunks: carried, receivedAt: done.completedAt };
    // Act
    const first = await commands.completeAs('t-as', own.id, done, 0, whole);
    const again = await commands.completeAs('t-as', own.id, { ...done, exitCode: 9 }, 0, whole);
    const stranger = await commands.completeAs('t-other', foreign.id, done, 0, whole);
    const raced = await commands.completeAs('t-as', posted.id, done, 0, whole);
    const missing = await commands.completeAs('t-as', 'c-none', done, 0, whole);
    // Assess: the write answers the completed command (no inline output in it); a refusal the command as it was
    expect(first.completed).toBe(true);
    expect(first.command).toMatchObject({ id: own.id, status: 'completed', outputSeq: 0, outputTail: 'hi\n' });
    expect(first.command?.result).toEqual(done);
    expect(first.command).not.toHaveProperty('inlineOutput');
    expect(first.command).not.toHaveProperty('pk');
    expect(again).toMatchObject({ completed: false, command: { id: own.id, status: 'completed' } });
    expect(again.command?.result?.exitCode).toBe(0);
    expect(stranger).toMatchObject({ completed: false, command: { id: foreign.id, targetId: 't-as' } });
    expect(await commands.get(foreign.id)).toMatchObject({ status: 'delivered', result: null });
    expect(raced).toMatchObject({ completed: false, command: { status: 'delivered', outputSeq: 0 } });
    expect(missing).toEqual({ completed: false, command: undefined });
    expect((await commands.output(own.id)).map((c) => c.data)).toEqual(['hi\n']);
  });

  it('cancels a queued command outright, and puts one cancel notice for a delivered one in the inbox', async () => {
    const waiting = aCommand('t-cancel');
    const running = aCommand('t-cancel');
    await commands.enqueue(running);
    await commands.claimInbox('t-cancel', 1, new Date());
    await commands.enqueue(waiting);
    await commands.requestCancel(waiting, new Date());
    await commands.requestCancel(running, new Date());
    await commands.requestCancel((await commands.get(running.id))!, new Date());
    expect((await commands.get(waiting.id))?.status).toBe('cancelled');
    const busy = await Promise.all([
      commands.claimInbox('t-cancel', 0, new Date()),
      commands.claimInbox('t-cancel', 0, new Date()),
    ]);
    expect(busy.flatMap((b) => b.cancel)).toEqual([running.id]);
    expect(await commands.claimInbox('t-cancel', 4, new Date())).toEqual({ commands: [], cancel: [] });
  });
});

describe('DynamoCommandRepository, pushed commands', () => {
  const to = { connectionId: 'conn-1', instance: 'installation-0123456789', at: '2026-11-22T10:00:00.000Z' };

  it('stores a pushed command claimed for its connection once; only its installation claims it back, once', async () => {
    // Prepare
    const command = aCommand('t-push');
    // Act
    const first = await commands.enqueuePushed(command, to);
    const again = await commands.enqueuePushed(command, to);
    const byQueue = await commands.claimInbox('t-push', 4, new Date());
    const byOther = await commands.claimInbox('t-push', 4, new Date(), 'another-installation-0000');
    const claims = await Promise.all(
      Array.from({ length: 5 }, () => commands.claimInbox('t-push', 4, new Date(), to.instance)),
    );
    // Assess
    expect([first, again]).toEqual([true, false]);
    expect(byQueue.commands).toEqual([]);
    expect(byOther.commands).toEqual([]);
    expect(claims.flatMap((c) => c.commands.map((x) => x.id))).toEqual([command.id]);
    const stored = await commands.get(command.id);
    expect(stored?.status).toBe('delivered');
    expect(stored?.pushedTo).toBeUndefined();
  });

  it('lets no number of unacknowledged pushes hide queued work or an installation’s own pushes', async () => {
    // Prepare: 30 pushes to a gone installation sort before everything queued (PUSHED# < RUN#), then one queued
    // command, and one push to the installation that claims
    const gone = { ...to, instance: 'gone-installation-000000' };
    for (let i = 0; i < 30; i += 1) await commands.enqueuePushed(aCommand('t-hidden'), gone);
    const own = aCommand('t-hidden');
    await commands.enqueuePushed(own, to);
    const queued = aCommand('t-hidden');
    await commands.enqueue(queued);
    // Act
    const byAnother = await commands.claimInbox('t-hidden', 4, new Date());
    await commands.enqueue(aCommand('t-hidden'));
    const byOwner = await commands.claimInbox('t-hidden', 4, new Date(), to.instance);
    // Assess
    expect(byAnother.commands.map((c) => c.id)).toEqual([queued.id]);
    expect(byOwner.commands.map((c) => c.id)).toContain(own.id);
    expect(byOwner.commands).toHaveLength(2);
  });

  it('takes a pushed command’s first output as its acknowledgement, in the write that raises outputSeq', async () => {
    // Prepare
    const command = aCommand('t-pushout');
    await commands.enqueuePushed(command, to);
    const pushed = (await commands.get(command.id))!;
    // Act
    await commands.appendOutput(pushed, [{ stream: 'stdout', data: 'hi\n', seq: 0 }], new Date(), {
      acknowledgePush: true,
    });
    const claimed = await commands.claimInbox('t-pushout', 4, new Date(), to.instance);
    // Assess
    const stored = await commands.get(command.id);
    expect(stored?.outputSeq).toBe(0);
    expect(stored?.pushedTo).toBeUndefined();
    expect(claimed.commands).toEqual([]);
  });

  it('puts a pushed command back in the queue only while still pushed to that connection', async () => {
    // Prepare
    const lost = aCommand('t-unpush');
    const acknowledged = aCommand('t-unpush');
    await commands.enqueuePushed(lost, to);
    await commands.enqueuePushed(acknowledged, to);
    await commands.acknowledgePush(acknowledged.id);
    // Act
    const otherConnection = await commands.unpush(lost, 'conn-2');
    const back = await commands.unpush(lost, 'conn-1');
    const notBack = await commands.unpush(acknowledged, 'conn-1');
    const claimed = await commands.claimInbox('t-unpush', 4, new Date());
    // Assess
    expect([otherConnection, back, notBack]).toEqual([false, true, false]);
    expect(claimed.commands.map((c) => c.id)).toEqual([lost.id]);
    expect((await commands.get(acknowledged.id))?.pushedTo).toBeUndefined();
  });

  it('raises outputSeq in the completing write when the completion carries output, only upwards', async () => {
    // Prepare
    const command = aCommand('t-seqdone');
    const lower = aCommand('t-seqdone');
    await commands.enqueuePushed(command, to);
    await commands.enqueuePushed(lower, to);
    const result = { exitCode: 0, startedAt: to.at, completedAt: to.at, errorMessage: null };
    const stored = (await commands.get(lower.id))!;
    await commands.appendOutput(stored, [{ stream: 'stdout', data: 'x', seq: 3 }], new Date());
    // Act
    const [data] = [[{ stream: 'stdout' as const, data: 'ok\n', seq: 0 }]];
    await commands.appendOutput((await commands.get(command.id))!, data, new Date(), { seqRaisedByCompletion: true });
    const seqBefore = (await commands.get(command.id))?.outputSeq;
    const done = await commands.complete(command.id, result, 0);
    const refused = await commands.complete(lower.id, result, 2);
    // Assess
    expect(seqBefore).toBe(-1);
    expect(done).toBe(true);
    expect((await commands.get(command.id))?.outputSeq).toBe(0);
    expect(refused).toBe(false);
    expect((await commands.get(lower.id))?.status).toBe('delivered');
  });

  it('completes a pushed command (acknowledging it) and keeps a cancel notice over its push', async () => {
    // Prepare
    const done = aCommand('t-pushdone');
    const cancelled = aCommand('t-pushdone');
    await commands.enqueuePushed(done, to);
    await commands.enqueuePushed(cancelled, to);
    // Act
    const completed = await commands.complete(done.id, {
      exitCode: 0,
      startedAt: to.at,
      completedAt: to.at,
      errorMessage: null,
    });
    await commands.requestCancel((await commands.get(cancelled.id))!, new Date());
    await commands.acknowledgePush(cancelled.id);
    const claimed = await commands.claimInbox('t-pushdone', 4, new Date(), to.instance);
    // Assess
    expect(completed).toBe(true);
    expect((await commands.get(done.id))?.pushedTo).toBeUndefined();
    expect(claimed).toEqual({ commands: [], cancel: [cancelled.id] });
  });
});

describe('DynamoTargetRepository', () => {
  const target = {
    id: '44444444-4444-4444-8444-444444444444',
    shortId: 'tgt1',
    name: 'web-1',
    hostname: 'web-1',
    os: 'linux',
    arch: 'x64',
    agentVersion: '1.0.0',
    tags: [{ key: 'role', value: 'web' }],
    tenantId: null,
    environmentId: null,
    agentTokenHash: 'hash-1',
    lastHeartbeatAt: '2026-11-22T10:00:00.000Z',
    createdAt: '2026-11-22T10:00:00.000Z',
    updatedAt: '2026-11-22T10:00:00.000Z',
  };

  it('finds a target by id, short id and agent token; heartbeats only move forward; delete removes every lookup', async () => {
    await targets.create(target);
    expect((await targets.find('tgt1'))?.id).toBe(target.id);
    expect((await targets.findByAgentTokenHash('hash-1'))?.name).toBe('web-1');
    await targets.recordHeartbeat(target.id, new Date('2026-11-22T10:05:00.000Z'));
    await targets.recordHeartbeat(target.id, new Date('2026-11-22T10:01:00.000Z'));
    expect((await targets.get(target.id))?.lastHeartbeatAt).toBe('2026-11-22T10:05:00.000Z');
    expect((await targets.listAll()).map((t) => t.id)).toContain(target.id);
    await targets.delete(target);
    await targets.recordHeartbeat(target.id, new Date('2026-11-22T10:06:00.000Z'));
    expect([
      await targets.get(target.id),
      await targets.find('tgt1'),
      await targets.findByAgentTokenHash('hash-1'),
    ]).toEqual([undefined, undefined, undefined]);
  });

  it('names an agent token’s target and tenant from its lookup item; an older lookup item falls back to the target', async () => {
    // Prepare
    const fresh = { ...target, id: '66666666-6666-4666-8666-666666666666', shortId: 'tgt3', agentTokenHash: 'hash-3' };
    const older = { ...target, id: '77777777-7777-4777-8777-777777777777', shortId: 'tgt4', agentTokenHash: 'hash-4' };
    await targets.create(fresh);
    await targets.create(older);
    await db.send(new PutCommand({ TableName: table, Item: { ...keys.agentToken('hash-4'), target_id: older.id } }));
    // Act
    const found = [await targets.agentOfToken('hash-3'), await targets.agentOfToken('hash-4')];
    await targets.recordSignOfLife(
      fresh.id,
      new Date('2026-11-22T10:00:04.000Z'),
      new Date('2026-11-22T09:59:59.000Z'),
    );
    const within = (await targets.get(fresh.id))?.lastHeartbeatAt;
    await targets.recordSignOfLife(
      fresh.id,
      new Date('2026-11-22T10:00:06.000Z'),
      new Date('2026-11-22T10:00:01.000Z'),
    );
    // Assess
    expect(found).toEqual([
      { targetId: fresh.id, tenantId: null },
      { targetId: older.id, tenantId: null, heardAt: '2026-11-22T10:00:00.000Z' },
    ]);
    expect(await targets.agentOfToken('hash-none')).toBeUndefined();
    expect(within).toBe('2026-11-22T10:00:00.000Z');
    expect((await targets.get(fresh.id))?.lastHeartbeatAt).toBe('2026-11-22T10:00:06.000Z');
  });

  it('updates only over the version it read', async () => {
    const other = { ...target, id: '55555555-5555-4555-8555-555555555555', shortId: 'tgt2', agentTokenHash: 'hash-2' };
    await targets.create(other);
    const next = { ...other, name: 'renamed', updatedAt: '2026-11-22T11:00:00.000Z' };
    expect(await targets.update(other, next)).toBe(true);
    expect(await targets.update(other, { ...next, name: 'lost' })).toBe(false);
    expect((await targets.get(other.id))?.name).toBe('renamed');
  });
});

describe('DynamoCommandRepository by deployment', () => {
  it('lists the commands of one deployment only', async () => {
    const mine = [aCommand('t-dep', { deploymentId: 'dep-x' }), aCommand('t-dep', { deploymentId: 'dep-x' })];
    for (const c of [...mine, aCommand('t-dep', { deploymentId: 'dep-y' })]) await commands.enqueue(c);
    expect((await commands.listByDeployment('dep-x')).map((c) => c.id).sort()).toEqual(mine.map((c) => c.id).sort());
  });
});

describe('retention', () => {
  it('gives every command item and output chunk a TTL: the deployment ceiling plus the retention after it was written', async () => {
    // Prepare
    const expiring = new DynamoCommandRepository(db, table, 1000);
    const command = aCommand('t-ttl');
    const at = new Date(Date.UTC(2026, 10, 23, 12, 0, 0));
    // Act
    await expiring.enqueue(command);
    await expiring.appendOutput(command, [{ stream: 'stdout', data: 'hi\n', seq: 0 }], at);
    // Assess: the raw items carry `ttl`; the command read back does not show it
    const raw = (await db.send(new GetCommand({ TableName: table, Key: keys.command(command.id) }))).Item;
    const chunk = (await db.send(new GetCommand({ TableName: table, Key: keys.commandOutput(command.id, 0) }))).Item;
    expect(raw?.['ttl']).toBe(Date.parse(command.createdAt) / 1000 + 1000);
    expect(chunk?.['ttl']).toBe(at.getTime() / 1000 + 1000);
    expect(await expiring.get(command.id)).not.toHaveProperty('ttl');
  });
});
