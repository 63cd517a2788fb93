// In-memory fakes of the targets context, for unit tests of its use cases.
import { noAgentChannel } from '../../domain/targets/agent-dispatch.js';
import type { TargetsDeps } from '../../domain/targets/deps.js';
import type {
  WholeOutput,
  AgentConnections,
  AgentMessage,
  CommandRepository,
  EnrollmentTokenRepository,
  Sleeper,
  TargetRepository,
} from '../../domain/targets/ports.js';
import type {
  Command,
  CommandResult,
  EnrollmentToken,
  OutputChunk,
  PushedTo,
  StoredChunk,
  Target,
} from '../../domain/targets/types.js';
import type { EnvironmentRef, TenantRef } from '../../domain/shared/lookups.js';
import { AesGcmSecretCipher } from '../../infra/crypto/secret-cipher.js';
import { FakeClock } from './clock.js';
import { fakeIds, fakeRandom } from './identity.js';

export class FakeTargetRepository implements TargetRepository {
  readonly targets = new Map<string, Target>();
  async create(target: Target) {
    this.targets.set(target.id, target);
  }
  async get(id: string) {
    return this.targets.get(id);
  }
  async getMany(ids: readonly string[]) {
    return [...new Set(ids)].flatMap((id) => {
      const target = this.targets.get(id);
      return target === undefined ? [] : [target];
    });
  }
  async find(idOrShortId: string) {
    return this.targets.get(idOrShortId) ?? [...this.targets.values()].find((t) => t.shortId === idOrShortId);
  }
  async findByAgentTokenHash(hash: string) {
    return [...this.targets.values()].find((t) => t.agentTokenHash === hash);
  }
  async agentOfToken(hash: string) {
    const target = await this.findByAgentTokenHash(hash);
    return target === undefined ? undefined : { targetId: target.id, tenantId: target.tenantId };
  }
  async recordSignOfLife(id: string, at: Date, olderThan: Date) {
    const target = this.targets.get(id);
    if (target === undefined) return;
    if (target.lastHeartbeatAt !== null && target.lastHeartbeatAt >= olderThan.toISOString()) return;
    this.targets.set(id, { ...target, lastHeartbeatAt: at.toISOString() });
  }
  async recordSignOff(id: string, at: Date) {
    const target = this.targets.get(id);
    if (target !== undefined) this.targets.set(id, { ...target, signedOffAt: at.toISOString() });
  }
  async listAll() {
    return [...this.targets.values()];
  }
  async update(previous: Target, next: Target) {
    if (this.targets.get(previous.id)?.updatedAt !== previous.updatedAt) return false;
    this.targets.set(next.id, next);
    return true;
  }
  async recordHeartbeat(id: string, at: Date, agentVersion?: string) {
    const target = this.targets.get(id);
    if (target !== undefined)
      this.targets.set(id, {
        ...target,
        lastHeartbeatAt: at.toISOString(),
        agentVersion: agentVersion ?? target.agentVersion,
      });
  }
  async recordAgentVersion(id: string, agentVersion: string) {
    const target = this.targets.get(id);
    if (target !== undefined) this.targets.set(id, { ...target, agentVersion });
  }
  async delete(target: Target) {
    this.targets.delete(target.id);
  }
  /** Connection id -> target id (the lookup items). */
  readonly connections = new Map<string, string>();
  async connect(
    targetId: string,
    connectionId: string,
    at: Date,
    instance: string | null = null,
    agentVersion?: string,
  ) {
    const target = this.targets.get(targetId);
    if (target === undefined) return undefined;
    const previous = target.connectionId ?? null;
    this.connections.set(connectionId, targetId);
    const now = at.toISOString();
    this.targets.set(targetId, {
      ...target,
      connectionId,
      connectionInstance: instance,
      connectedAt: now,
      lastHeartbeatAt: now,
      agentVersion: agentVersion ?? target.agentVersion,
    });
    return { replaced: previous !== null && previous !== connectionId ? previous : null };
  }
  async connectionTarget(connectionId: string) {
    return this.connections.get(connectionId);
  }
  async recordConnectionHeartbeat(targetId: string, connectionId: string, at: Date) {
    const target = this.targets.get(targetId);
    if (target?.connectionId !== connectionId) return false;
    if (target.lastHeartbeatAt === null || target.lastHeartbeatAt < at.toISOString())
      this.targets.set(targetId, { ...target, lastHeartbeatAt: at.toISOString() });
    return true;
  }
  async disconnect(targetId: string, connectionId: string, at: Date) {
    const target = this.targets.get(targetId);
    if (target !== undefined && target.connectionId === connectionId)
      this.targets.set(targetId, {
        ...target,
        connectionId: null,
        connectionInstance: null,
        disconnectedAt: at.toISOString(),
      });
    this.connections.delete(connectionId);
  }
}

/** Agents' sockets as a list of what was sent and closed; `gone` connections answer 'gone'. */
export class FakeAgentConnections implements AgentConnections {
  readonly sent: { connectionId: string; message: AgentMessage }[] = [];
  readonly closed: string[] = [];
  readonly gone = new Set<string>();
  async post(connectionId: string, message: AgentMessage) {
    if (this.gone.has(connectionId)) return 'gone' as const;
    this.sent.push({ connectionId, message });
    return 'sent' as const;
  }
  async close(connectionId: string) {
    this.closed.push(connectionId);
    this.gone.add(connectionId);
  }
}

export class FakeEnrollmentTokenRepository implements EnrollmentTokenRepository {
  readonly tokens = new Map<string, EnrollmentToken>();
  async create(token: EnrollmentToken) {
    this.tokens.set(token.tokenHash, token);
  }
  async get(hash: string) {
    return this.tokens.get(hash);
  }
  async findById(id: string) {
    return [...this.tokens.values()].find((t) => t.id === id);
  }
  async listAll() {
    return [...this.tokens.values()];
  }
  async takeUse(hash: string, at: Date) {
    const token = this.tokens.get(hash);
    if (token === undefined || token.uses >= token.maxUses || Date.parse(token.expiresAt) <= at.getTime()) return false;
    this.tokens.set(hash, { ...token, uses: token.uses + 1 });
    return true;
  }
  async delete(token: EnrollmentToken) {
    this.tokens.delete(token.tokenHash);
  }
}

export class FakeCommandRepository implements CommandRepository {
  readonly commands = new Map<string, Command>();
  readonly chunks = new Map<string, StoredChunk[]>();
  /** Cancel notices not yet taken, per command id. */
  readonly notices = new Set<string>();
  async enqueue(command: Command) {
    if (!this.commands.has(command.id)) this.commands.set(command.id, command);
  }
  async enqueuePushed(command: Command, to: PushedTo) {
    if (this.commands.has(command.id)) return false;
    this.commands.set(command.id, { ...command, status: 'delivered', deliveredAt: to.at, pushedTo: to });
    return true;
  }
  async unpush(command: Command, connectionId: string) {
    const current = this.commands.get(command.id);
    if (current?.status !== 'delivered' || current.pushedTo?.connectionId !== connectionId) return false;
    const { pushedTo: _pushed, ...rest } = current;
    this.commands.set(command.id, { ...rest, status: 'queued', deliveredAt: null });
    return true;
  }
  async acknowledgePush(id: string) {
    const current = this.commands.get(id);
    if (current?.pushedTo === undefined || this.notices.has(id)) return;
    const { pushedTo: _pushed, ...rest } = current;
    this.commands.set(id, rest);
  }
  async get(id: string) {
    return this.commands.get(id);
  }
  async listByDeployment(deploymentId: string) {
    return [...this.commands.values()].filter((c) => c.deploymentId === deploymentId);
  }
  async claimInbox(targetId: string, max: number, at: Date, instance?: string) {
    const cancel = [...this.notices].filter((id) => this.commands.get(id)?.targetId === targetId);
    cancel.forEach((id) => this.notices.delete(id));
    const pushed = [...this.commands.values()]
      .filter(
        (c) =>
          c.targetId === targetId &&
          c.status === 'delivered' &&
          c.pushedTo !== undefined &&
          instance !== undefined &&
          c.pushedTo.instance === instance,
      )
      .slice(0, max);
    const again = pushed.map((c) => {
      const { pushedTo: _pushed, ...rest } = c;
      this.commands.set(c.id, rest);
      return rest;
    });
    const queued = [...this.commands.values()]
      .filter((c) => c.targetId === targetId && c.status === 'queued')
      .slice(0, max - again.length);
    const commands = queued.map((c) => {
      const delivered: Command = { ...c, status: 'delivered', deliveredAt: at.toISOString() };
      this.commands.set(c.id, delivered);
      return delivered;
    });
    return { commands: [...again, ...commands], cancel };
  }
  async appendOutput(
    command: Command,
    chunks: readonly OutputChunk[],
    at: Date,
    options: { readonly acknowledgePush?: boolean; readonly seqRaisedByCompletion?: boolean } = {},
  ) {
    if (options.acknowledgePush === true) await this.acknowledgePush(command.id);
    const raise = options.seqRaisedByCompletion !== true;
    const stored = this.chunks.get(command.id) ?? [];
    const fresh = chunks.filter((c) => !stored.some((s) => s.seq === c.seq));
    stored.push(...fresh.map((c) => ({ ...c, receivedAt: at.toISOString() })));
    this.chunks.set(command.id, stored);
    const current = this.commands.get(command.id) as Command;
    if (raise)
      this.commands.set(command.id, {
        ...current,
        outputSeq: Math.max(current.outputSeq, ...chunks.map((c) => c.seq)),
      });
    return fresh;
  }
  async output(id: string) {
    return [...(this.chunks.get(id) ?? [])].sort((a, b) => a.seq - b.seq);
  }
  async complete(id: string, result: CommandResult, outputSeq?: number, whole?: WholeOutput) {
    const command = this.commands.get(id);
    if (command?.status !== 'delivered') return false;
    if (outputSeq !== undefined && command.outputSeq >= outputSeq) return false;
    if (whole !== undefined && command.outputSeq !== whole.seqWas) return false;
    const { pushedTo: _pushed, ...rest } = command;
    this.commands.set(id, {
      ...rest,
      status: 'completed',
      result,
      outputSeq: outputSeq ?? command.outputSeq,
      ...(whole === undefined ? {} : { outputTail: whole.tail }),
    });
    const inline = (whole?.chunks ?? []).map((c) => ({ ...c, receivedAt: whole?.receivedAt ?? result.completedAt }));
    if (inline.length > 0) this.chunks.set(id, [...(this.chunks.get(id) ?? []), ...inline]);
    this.notices.delete(id);
    return true;
  }
  async completeAs(
    targetId: string,
    id: string,
    result: CommandResult,
    outputSeq: number | undefined,
    whole: WholeOutput,
  ) {
    const before = this.commands.get(id);
    if (before?.targetId !== targetId) return { completed: false, command: before };
    const completed = await this.complete(id, result, outputSeq, whole);
    return { completed, command: this.commands.get(id) };
  }
  async requestCancel(command: Command, at: Date) {
    const current = this.commands.get(command.id) as Command;
    if (current.status === 'queued')
      this.commands.set(command.id, { ...current, status: 'cancelled', cancelRequestedAt: at.toISOString() });
    else if (current.status === 'delivered' && current.cancelRequestedAt === null) {
      this.commands.set(command.id, { ...current, cancelRequestedAt: at.toISOString() });
      this.notices.add(command.id);
    }
  }
}

/** Sleeping advances the fake clock: long polls finish at once in fake time. */
export const fakeSleeper = (clock: FakeClock): Sleeper => ({
  sleep: async (ms) => clock.advance(ms),
});

export const targetsFakes = (options: { tenants?: TenantRef[]; environments?: EnvironmentRef[] } = {}) => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const targets = new FakeTargetRepository();
  const enrollmentTokens = new FakeEnrollmentTokenRepository();
  const commands = new FakeCommandRepository();
  const tenants = options.tenants ?? [];
  const environments = options.environments ?? [];
  const deps: TargetsDeps = {
    targets,
    enrollmentTokens,
    commands,
    tenants: { findTenant: async (id) => tenants.find((t) => t.id === id || t.shortId === id) },
    environments: { findEnvironment: async (id) => environments.find((e) => e.id === id || e.shortId === id) },
    random: fakeRandom(),
    cipher: new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 7) } }),
    ids: fakeIds(),
    clock,
    sleeper: fakeSleeper(clock),
    dispatch: noAgentChannel(commands),
    settings: { serverVersion: '1.0.0', pollIntervalMs: 500 },
  };
  return { deps, clock, targets, enrollmentTokens, commands };
};
