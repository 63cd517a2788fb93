import { describe, expect, it } from 'vitest';
import type { Caller } from '../../../../domain/identity/types.js';
import type { ChangedRecord, ChangeFeed } from '../../../../domain/shared/ports.js';
import type { Target } from '../../../../domain/targets/types.js';
import { RESOURCE_STREAM_TIMING } from '../../../../domain/streams/resource-changes.js';
import {
  changedSince,
  watches,
  type NextViews,
  type ResourceStreamDeps,
  type ResourceType,
  type ResourceView,
  type Watcher,
} from '../../../../domain/streams/resource-sources.js';
import { RESOURCE_SOURCES, resourceFrames } from '../../../../functions/streams/resource-streams.js';
import { FakeClock } from '../../../fakes/clock.js';
import {
  aDeployment,
  aDraft,
  aPendingRequest,
  FakeDeploymentRepository,
  FakePendingRequestRepository,
} from '../../../fakes/deployments.js';
import { FakeTargetRepository } from '../../../fakes/targets.js';

const ACME = 'a0000000-0000-4000-8000-00000000000a';
const GLOBEX = 'a0000000-0000-4000-8000-00000000000b';

const caller = (tenantId: string | null): Caller => ({
  kind: 'user',
  userId: 'u0000000-0000-4000-8000-000000000001',
  tenantId,
  roles: ['user'],
  permissions: new Set(['deployments:read', 'pending_deployments:read', 'targets:read'] as const),
});

const aTarget = (overrides: Partial<Target> = {}): Target => ({
  id: 't0000000-0000-4000-8000-000000000001',
  shortId: 't1',
  name: 'web-1',
  hostname: 'web-1.local',
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId: null,
  environmentId: null,
  agentTokenHash: 'hash',
  lastHeartbeatAt: null,
  createdAt: '2026-11-22T09:00:00.000Z',
  updatedAt: '2026-11-22T09:00:00.000Z',
  ...overrides,
});

/**
 * A change feed over the fakes that knows no write times: at every look it lists every record of the resource (and
 * every one it listed before, so deletions show) as written just now. The stream then reads all of them by id.
 */
class EverythingChangedFeed implements ChangeFeed {
  private readonly known = new Map<string, ChangedRecord>();
  looks = 0;

  constructor(
    private readonly sources: Readonly<
      Record<ResourceType, () => Promise<readonly { id: string; tenantId: string | null }[]>>
    >,
    private readonly clock: FakeClock,
  ) {}

  async since(resource: ResourceType): Promise<readonly ChangedRecord[]> {
    this.looks += 1;
    const at = this.clock.now().toISOString();
    for (const record of await this.sources[resource]())
      this.known.set(`${resource}#${record.id}`, { id: record.id, at, tenantId: record.tenantId });
    return [...this.known].filter(([key]) => key.startsWith(`${resource}#`)).map(([, record]) => ({ ...record, at }));
  }
}

const world = () => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const deployments = new FakeDeploymentRepository();
  const pending = new FakePendingRequestRepository();
  const targets = new FakeTargetRepository();
  const changes = new EverythingChangedFeed(
    {
      deployments: () => deployments.listAll(),
      pending_deployments: async () => (await pending.listAll()).map((r) => ({ id: r.id, tenantId: r.tenantId })),
      targets: () => targets.listAll(),
    },
    clock,
  );
  const deps: ResourceStreamDeps = {
    verify: async () => caller(null),
    deployments,
    pending,
    targets,
    changes,
    clock,
  };
  return { clock, deployments, pending, targets, changes, deps };
};

const ids = (views: ReadonlyMap<string, ResourceView>) => [...views.keys()];

describe('watches (tenant scoping)', () => {
  it('shows a tenant-scoped caller only its tenant’s records, a global caller all or the tenant it asked for', () => {
    const acme = { tenantId: ACME };
    const globex = { tenantId: GLOBEX };
    const global = { tenantId: null };
    const tenantCaller: Watcher = { caller: caller(ACME) };
    expect([watches(tenantCaller, acme), watches(tenantCaller, globex), watches(tenantCaller, global)]).toEqual([
      true,
      false,
      false,
    ]);
    const globalCaller: Watcher = { caller: caller(null) };
    expect([watches(globalCaller, acme), watches(globalCaller, globex), watches(globalCaller, global)]).toEqual([
      true,
      true,
      true,
    ]);
    const narrowed: Watcher = { caller: caller(null), tenantId: ACME };
    expect([watches(narrowed, acme), watches(narrowed, globex), watches(narrowed, global)]).toEqual([
      true,
      false,
      false,
    ]);
  });
});

describe('RESOURCE_SOURCES', () => {
  it('lists the deployments the caller may see, oldest first, as list views', async () => {
    // Prepare
    const { deps, deployments } = world();
    deployments.put(aDeployment({ id: 'd2', shortId: 'd2', createdAt: '2026-11-22T10:00:02.000Z', tenantId: ACME }));
    deployments.put(aDeployment({ id: 'd1', shortId: 'd1', createdAt: '2026-11-22T10:00:01.000Z', tenantId: null }));
    deployments.put(aDeployment({ id: 'd3', shortId: 'd3', createdAt: '2026-11-22T10:00:03.000Z', tenantId: GLOBEX }));
    // Act
    const all = await RESOURCE_SOURCES.deployments.list(deps, { caller: caller(null) });
    const acme = await RESOURCE_SOURCES.deployments.list(deps, { caller: caller(ACME) });
    // Assess
    expect(ids(all)).toEqual(['d1', 'd2', 'd3']);
    expect(ids(acme)).toEqual(['d2']);
    expect(all.get('d2')).toMatchObject({
      id: 'd2',
      short_id: 'd2',
      state: 'running',
      tenant_id: ACME,
      source_type: 'action',
    });
  });

  it('lists the pending requests the caller may see, oldest first, with their queue position', async () => {
    // Prepare
    const { deps, pending } = world();
    pending.put(
      aPendingRequest({
        id: 'p1',
        queuedAt: '2026-11-22T10:00:01.000Z',
        draft: aDraft({ tenantId: ACME }),
        tenantId: ACME,
      }),
    );
    pending.put(aPendingRequest({ id: 'p2', queuedAt: '2026-11-22T10:00:02.000Z' }));
    // Act
    const all = await RESOURCE_SOURCES.pending_deployments.list(deps, { caller: caller(null) });
    const acme = await RESOURCE_SOURCES.pending_deployments.list(deps, { caller: caller(ACME) });
    const narrowed = await RESOURCE_SOURCES.pending_deployments.list(deps, { caller: caller(null), tenantId: GLOBEX });
    // Assess
    expect(ids(all)).toEqual(['p1', 'p2']);
    expect([all.get('p1')?.['queue_position'], all.get('p2')?.['queue_position']]).toEqual([1, 2]);
    expect(ids(acme)).toEqual(['p1']);
    expect(ids(narrowed)).toEqual([]);
  });

  it('lists the targets the caller may see with the status the clock gives them; a global target is not a tenant’s', async () => {
    // Prepare
    const { deps, targets } = world();
    await targets.create(aTarget({ id: 't1', shortId: 't1', lastHeartbeatAt: '2026-11-22T09:59:50.000Z' }));
    await targets.create(aTarget({ id: 't2', shortId: 't2', tenantId: ACME, createdAt: '2026-11-22T09:30:00.000Z' }));
    // Act
    const all = await RESOURCE_SOURCES.targets.list(deps, { caller: caller(null) });
    const acme = await RESOURCE_SOURCES.targets.list(deps, { caller: caller(ACME) });
    // Assess
    expect(ids(all)).toEqual(['t1', 't2']);
    expect([all.get('t1')?.['status'], all.get('t2')?.['status']]).toEqual(['online', 'offline']);
    expect(ids(acme)).toEqual(['t2']);
  });
});

interface Frame {
  id?: string;
  message?: { event: string; data: Record<string, unknown> & { type: string } };
  retry?: string;
  comment?: string;
}

/** Parses SSE text strictly: id, one data line, retry or a comment; never an `event:` field. */
const parse = (raw: string): Frame[] =>
  raw
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const frame: Frame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('data: ')) {
          expect(frame.message).toBeUndefined();
          frame.message = JSON.parse(line.slice(6));
          expect(frame.message!.data.type).toBe(frame.message!.event);
        } else if (line.startsWith('retry: ')) frame.retry = line.slice(7);
        else if (line.startsWith(': ')) frame.comment = line.slice(2);
        else throw new Error(`unexpected line ${JSON.stringify(line)}`);
      }
      return frame;
    });

/**
 * Runs a stream of `resourceType` to its end (maxMs) with a clock that jumps by each sleep; `onPoll(n)` changes
 * the world before the n-th listing after the first.
 */
const run = async (
  w: ReturnType<typeof world>,
  resourceType: ResourceType,
  options: {
    watcher?: Watcher;
    snapshot?: boolean;
    onPoll?: (poll: number) => Promise<void> | void;
    failing?: (poll: number) => boolean;
    maxMs?: number;
  } = {},
) => {
  const source = RESOURCE_SOURCES[resourceType];
  const watcher = options.watcher ?? { caller: caller(null) };
  let polls = 0;
  const listedAt = w.clock.now();
  const initial = await source.list(w.deps, watcher);
  const follow = source.follow(w.deps, watcher, listedAt);
  const next: NextViews = async (previous) => {
    if (options.failing?.(polls)) throw new Error('table unavailable');
    return follow(previous);
  };
  const wait = async (ms: number) => {
    w.clock.advance(ms);
    polls += 1;
    await options.onPoll?.(polls);
  };
  const timing = { ...RESOURCE_STREAM_TIMING, maxMs: options.maxMs ?? 10_000 };
  const started = w.clock.now().getTime();
  let raw = '';
  const feed = { resourceType, initial, next, fingerprint: source.fingerprint, snapshot: options.snapshot ?? false };
  for await (const frame of resourceFrames(w.clock, feed, new AbortController().signal, timing, wait)) raw += frame;
  return { raw, frames: parse(raw), elapsedMs: w.clock.now().getTime() - started };
};

const changes = (frames: Frame[]) =>
  frames
    .filter((f) => f.message !== undefined && f.message.event !== 'ping')
    .map((f) => [f.id, f.message!.event, f.message!.data['id']]);

describe('resourceFrames', () => {
  it('opens with a retry hint and a ping, then reports created, updated and deleted records as they change, each with the next id', async () => {
    // Prepare
    const w = world();
    await w.targets.create(aTarget({ id: 'old', shortId: 'old' }));
    // Act
    const { frames, raw } = await run(w, 'targets', {
      onPoll: async (poll) => {
        if (poll === 1) await w.targets.create(aTarget({ id: 'new', shortId: 'new', name: 'web-2' }));
        if (poll === 3)
          await w.targets.update(w.targets.targets.get('new')!, {
            ...w.targets.targets.get('new')!,
            name: 'web-2b',
            updatedAt: 'later',
          });
        if (poll === 5) await w.targets.delete(w.targets.targets.get('new')!);
      },
    });
    // Assess
    expect(raw).not.toMatch(/^event:/m);
    expect(frames[0]).toEqual({ retry: '2000' });
    expect(frames[1]).toEqual({ message: { event: 'ping', data: { type: 'ping' } } });
    expect(changes(frames)).toEqual([
      ['1', 'created', 'new'],
      ['2', 'updated', 'new'],
      ['3', 'deleted', 'new'],
    ]);
    const [created, updated, deleted] = frames.filter((f) => f.id !== undefined).map((f) => f.message!.data);
    expect(created).toEqual({
      type: 'created',
      resource_type: 'targets',
      id: 'new',
      record: expect.objectContaining({ id: 'new', name: 'web-2', status: 'offline' }),
    });
    expect(updated).toMatchObject({ type: 'updated', resource_type: 'targets', record: { name: 'web-2b' } });
    expect(deleted).toMatchObject({ type: 'deleted', resource_type: 'targets', record: { id: 'new', name: 'web-2b' } });
  });

  it('sends the records of the first listing as created after the ping when a snapshot is asked for, and nothing else while nothing changes', async () => {
    // Prepare
    const w = world();
    w.deployments.put(aDeployment({ id: 'd1', shortId: 'd1', createdAt: '2026-11-22T10:00:01.000Z' }));
    w.deployments.put(aDeployment({ id: 'd2', shortId: 'd2', createdAt: '2026-11-22T10:00:02.000Z' }));
    // Act
    const withSnapshot = await run(w, 'deployments', { snapshot: true });
    const without = await run(w, 'deployments');
    // Assess
    expect(withSnapshot.frames[1]!.message!.event).toBe('ping');
    expect(changes(withSnapshot.frames)).toEqual([
      ['1', 'created', 'd1'],
      ['2', 'created', 'd2'],
    ]);
    expect(changes(without.frames)).toEqual([]);
  });

  it('reports a target going stale then offline as updates, but not a heartbeat that keeps it online', async () => {
    // Prepare
    const w = world();
    await w.targets.create(aTarget({ id: 't1', lastHeartbeatAt: '2026-11-22T10:00:00.000Z' }));
    // Act: heartbeats for 30 s, then silence
    const { frames } = await run(w, 'targets', {
      maxMs: 6 * 60_000,
      onPoll: (poll) => {
        if (poll <= 30) void w.targets.recordHeartbeat('t1', w.clock.now());
      },
    });
    // Assess
    const statuses = frames
      .filter((f) => f.message?.event === 'updated')
      .map((f) => (f.message!.data['record'] as { status: string }).status);
    expect(statuses).toEqual(['stale', 'offline']);
  });

  it('scopes changes to the watcher: a tenant-scoped stream does not see another tenant’s or a global record', async () => {
    // Prepare
    const w = world();
    // Act
    const { frames } = await run(w, 'deployments', {
      watcher: { caller: caller(ACME) },
      onPoll: (poll) => {
        if (poll === 1) w.deployments.put(aDeployment({ id: 'global', shortId: 'g', tenantId: null }));
        if (poll === 2) w.deployments.put(aDeployment({ id: 'globex', shortId: 'gx', tenantId: GLOBEX }));
        if (poll === 3) w.deployments.put(aDeployment({ id: 'acme', shortId: 'ac', tenantId: ACME }));
      },
    });
    // Assess
    expect(changes(frames)).toEqual([['1', 'created', 'acme']]);
  });

  it('pings after 15 s of silence and ends itself at maxMs with a retry hint', async () => {
    // Prepare
    const w = world();
    // Act
    const { frames, elapsedMs } = await run(w, 'targets', { maxMs: 40_000 });
    // Assess
    expect(frames.filter((f) => f.message?.event === 'ping')).toHaveLength(3); // on open, at 15 s and 30 s
    expect(elapsedMs).toBe(40_000);
    expect(frames.at(-2)).toEqual({ retry: '2000' });
    expect(frames.at(-1)!.comment).toContain('reconnect');
  });

  it('rides out a failed listing, and ends with a retry hint after five in a row', async () => {
    // Prepare
    const w = world();
    // Act: the 2nd listing fails once, then a change, then every listing fails
    const { frames } = await run(w, 'targets', {
      maxMs: 600_000,
      failing: (poll) => poll === 2 || poll >= 5,
      onPoll: async (poll) => {
        if (poll === 3) await w.targets.create(aTarget({ id: 'after-failure' }));
      },
    });
    // Assess
    expect(changes(frames)).toEqual([['1', 'created', 'after-failure']]);
    expect(frames.at(-1)).toEqual({ retry: '2000' });
  });
});

describe('following the change feed', () => {
  /** A feed that answers what a test scripted, and records where each look started. */
  const scripted = (entries: () => readonly ChangedRecord[]) => {
    const froms: string[] = [];
    const feed: ChangeFeed = {
      since: async (_resource, from) => {
        froms.push(from);
        return entries().filter((e) => e.at >= from);
      },
    };
    return { feed, froms };
  };

  it('looks back 5 s before its previous look, reports each entry once, only the watcher’s tenant, again after a failure', async () => {
    // Prepare
    const w = world();
    const log: ChangedRecord[] = [];
    const { feed, froms } = scripted(() => log);
    const look = changedSince(
      { changes: feed, clock: w.clock },
      'deployments',
      { caller: caller(ACME) },
      w.clock.now(),
    );
    const ids = (entries: readonly ChangedRecord[]) => entries.map((e) => e.id);
    // Act: an entry written before the listing (inside the look-back), one for another tenant, then one later
    log.push({ id: 'd0', at: '2026-11-22T09:59:58.000Z', tenantId: ACME });
    log.push({ id: 'dx', at: '2026-11-22T09:59:59.000Z', tenantId: GLOBEX });
    w.clock.advance(1_000);
    const first = await look(async (fresh) => ids(fresh));
    const again = await look(async (fresh) => ids(fresh));
    log.push({ id: 'd1', at: '2026-11-22T10:00:01.500Z', tenantId: ACME });
    w.clock.advance(10_000);
    const failed = await look(async () => {
      throw new Error('read failed');
    }).catch((error: Error) => error.message);
    const retried = await look(async (fresh) => ids(fresh));
    // Assess
    expect(first).toEqual(['d0']);
    expect(again).toEqual([]);
    expect(failed).toBe('read failed');
    expect(retried).toEqual(['d1']);
    expect(froms).toEqual([
      '2026-11-22T09:59:55.000Z',
      '2026-11-22T09:59:56.000Z',
      '2026-11-22T09:59:56.000Z',
      '2026-11-22T09:59:56.000Z',
    ]);
  });

  it('reads nothing but the feed while nothing changes, and then only the changed deployments', async () => {
    // Prepare: 50 deployments listed once
    const w = world();
    for (let i = 0; i < 50; i += 1)
      w.deployments.put(
        aDeployment({
          id: `d${i}`,
          shortId: `d${i}`,
          createdAt: `2026-11-22T09:00:${String(i).padStart(2, '0')}.000Z`,
        }),
      );
    const log: ChangedRecord[] = [];
    const { feed } = scripted(() => log);
    let listed = 0;
    let read: string[] = [];
    const deps: ResourceStreamDeps = {
      ...w.deps,
      changes: feed,
      deployments: {
        listAll: async () => ((listed += 1), w.deployments.listAll()),
        getMany: async (ids) => ((read = [...read, ...ids]), w.deployments.getMany(ids)),
      },
    };
    const watcher = { caller: caller(null) };
    const listedAt = w.clock.now();
    const initial = await RESOURCE_SOURCES.deployments.list(deps, watcher);
    const next = RESOURCE_SOURCES.deployments.follow(deps, watcher, listedAt);
    // Act: ten idle looks, then one deployment changes
    let views = initial;
    for (let i = 0; i < 10; i += 1) {
      w.clock.advance(1_000);
      views = await next(views);
    }
    const idleReads = read.length;
    w.deployments.put({ ...(await w.deployments.get('d7'))!, state: 'success' });
    log.push({ id: 'd7', at: w.clock.now().toISOString(), tenantId: null });
    w.clock.advance(1_000);
    views = await next(views);
    // Assess
    expect(listed).toBe(1);
    expect(idleReads).toBe(0);
    expect(read).toEqual(['d7']);
    expect(views.get('d7')).toMatchObject({ state: 'success' });
    expect(views.size).toBe(50);
  });
});

describe('a deployments stream without a snapshot', () => {
  it('lists nothing, reports a change of an older deployment as updated and a new one as created', async () => {
    // Prepare: one deployment from before the stream, none listed
    const w = world();
    const old = aDeployment({ id: 'old', shortId: 'old', createdAt: '2026-11-22T09:00:00.000Z' });
    w.deployments.put(old);
    const source = RESOURCE_SOURCES.deployments;
    const watcher = { caller: caller(null) };
    const listedAt = w.clock.now();
    const log: ChangedRecord[] = [];
    const changes_: ChangeFeed = { since: async (_resource, from) => log.filter((e) => e.at >= from) };
    const follow = source.follow({ ...w.deps, changes: changes_ }, watcher, listedAt);
    let polls = 0;
    const wait = async (ms: number) => {
      w.clock.advance(ms);
      polls += 1;
      if (polls === 2) {
        const at = w.clock.now().toISOString();
        w.deployments.put({ ...old, state: 'success' });
        w.deployments.put(aDeployment({ id: 'new', shortId: 'new', createdAt: at }));
        log.push({ id: 'old', at, tenantId: null }, { id: 'new', at, tenantId: null });
      }
    };
    const feed = {
      resourceType: 'deployments' as const,
      initial: new Map<string, ResourceView>(),
      next: follow,
      snapshot: false,
      existedBefore: (view: ResourceView) => source.existedBefore!(view, listedAt),
    };
    // Act
    let raw = '';
    const timing = { ...RESOURCE_STREAM_TIMING, maxMs: 5_000 };
    for await (const frame of resourceFrames(w.clock, feed, new AbortController().signal, timing, wait)) raw += frame;
    // Assess
    expect(changes(parse(raw))).toEqual([
      ['1', 'updated', 'old'],
      ['2', 'created', 'new'],
    ]);
  });
});
