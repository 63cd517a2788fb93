// Ports of the targets context. Adapters: infra/dynamodb/{target,command}-repository.ts.
import type { Command, CommandResult, EnrollmentToken, OutputChunk, PushedTo, StoredChunk, Target } from './types.js';

export interface TargetRepository {
  /** Creates the target with its short-id alias and its agent-token lookup item. */
  create(target: Target): Promise<void>;
  get(id: string): Promise<Target | undefined>;
  /** The targets that exist among `ids` (one batch read per 100), in no particular order. */
  getMany(ids: readonly string[]): Promise<readonly Target[]>;
  /** By UUID or short id. */
  find(idOrShortId: string): Promise<Target | undefined>;
  findByAgentTokenHash(tokenHash: string): Promise<Target | undefined>;
  /**
   * Whose agent token this is, from its lookup item alone (one read): the target and its tenant (neither ever
   * changes). A lookup item written before it carried the tenant: the target is read too (and its heartbeat given).
   */
  agentOfToken(
    tokenHash: string,
  ): Promise<
    { readonly targetId: string; readonly tenantId: string | null; readonly heardAt?: string | null } | undefined
  >;
  listAll(): Promise<readonly Target[]>;
  /** Name and tags; false when the target changed meanwhile (optimistic check on updatedAt). */
  update(previous: Target, next: Target): Promise<boolean>;
  /** A heartbeat at `at`; with `agentVersion`, the agent's version stored in the same write (after an upgrade). */
  recordHeartbeat(id: string, at: Date, agentVersion?: string): Promise<void>;
  /** The version the target's agent named (a refused one too); nothing for a deleted target or the same version. */
  recordAgentVersion(id: string, agentVersion: string): Promise<void>;
  /** A heartbeat at `at` written only over one older than `olderThan` (a sign of life: one write per burst). */
  recordSignOfLife(id: string, at: Date, olderThan: Date): Promise<void>;
  /** The agent stopped cleanly at `at` (its goodbye); nothing for a deleted target. */
  recordSignOff(id: string, at: Date): Promise<void>;
  delete(target: Target): Promise<void>;
  /**
   * The agent's new WebSocket: stored with the target (replacing any earlier one) and as a lookup from the
   * connection id, with a heartbeat at `at` (and the agent's version, when it named one). Answers the connection it
   * replaced (null: none), or undefined when the target no longer exists.
   */
  connect(
    targetId: string,
    connectionId: string,
    at: Date,
    instance?: string | null,
    agentVersion?: string,
  ): Promise<{ replaced: string | null } | undefined>;
  /** The connection's lookup item: whose it is; undefined once it closed (or never was). */
  connectionTarget(connectionId: string): Promise<string | undefined>;
  /**
   * A heartbeat at `at` over the connection, in one write: only while the target names `connectionId` as its current
   * connection (a heartbeat already newer is left as it is). False when the target does not exist or holds another
   * connection (or none): this connection is not known as the target's.
   */
  recordConnectionHeartbeat(targetId: string, connectionId: string, at: Date): Promise<boolean>;
  /**
   * The connection closed: removed from the target only while it is still the target's current one (a newer
   * connection is left alone), and its lookup item deleted.
   */
  disconnect(targetId: string, connectionId: string, at: Date): Promise<void>;
}

/** Messages to agents over their open WebSockets (API Gateway's @connections API). */
export interface AgentConnections {
  /** Sends one JSON message; 'gone' when the connection no longer exists. */
  post(connectionId: string, message: AgentMessage): Promise<'sent' | 'gone'>;
  /** Closes the connection (the agent sees its socket close); a gone one is fine. */
  close(connectionId: string): Promise<void>;
}

/**
 * How the service reaches an agent between its polls. Two adapters (agent-dispatch.ts): over the agents' WebSockets
 * (the agent channel), and "no channel" for a service without a WebSocket API (agents poll; commands are only
 * queued, nobody is woken).
 */
export interface AgentDispatch {
  /** Tells the target's agent to look at its inbox now; false when it cannot be reached (no open connection). */
  wake(targetId: string): Promise<boolean>;
  /** Stores the commands a pass launches and hands each to its agent: pushed over its socket, or queued (and woken). */
  launch(commands: readonly Command[]): Promise<void>;
  /** A pushed command not acknowledged in time: pushed again to the same installation's current connection. */
  pushAgain(command: Command, target: Target | undefined): Promise<void>;
  /** The target was deleted: its agent is told and its connection closed and cleared (best effort, never throws). */
  revoke(target: Target): Promise<void>;
}

/** What the server tells an agent over its WebSocket. */
export type AgentMessage =
  | { readonly type: 'wake' }
  /** A command claimed for this connection (decisions.md, "Commands pushed to the socket"): run it. */
  | { readonly type: 'command'; readonly command: Readonly<Record<string, unknown>> }
  | { readonly type: 'replaced' }
  | { readonly type: 'revoked' }
  | { readonly type: 'error'; readonly error: { readonly code: string; readonly message: string } };

export interface EnrollmentTokenRepository {
  /** Kept until it expires or is revoked. */
  create(token: EnrollmentToken): Promise<void>;
  get(tokenHash: string): Promise<EnrollmentToken | undefined>;
  findById(id: string): Promise<EnrollmentToken | undefined>;
  listAll(): Promise<readonly EnrollmentToken[]>;
  /** Takes one use when the token still exists, is unexpired at `at` and has uses left (one conditional write). */
  takeUse(tokenHash: string, at: Date): Promise<boolean>;
  /** Revokes: the token stops working at once. */
  delete(token: EnrollmentToken): Promise<void>;
}

export interface CommandRepository {
  /** Stores the command and puts it in its target's inbox; a command with that id already stored is left alone. */
  enqueue(command: Command): Promise<void>;
  /**
   * Stores the command already claimed for an agent's connection (status delivered, `pushedTo`), its inbox entry kept
   * as PUSHED#... until the agent acknowledges it; false when a command with that id is already stored (one conditional
   * write: a repeated engine pass neither stores nor pushes it twice).
   */
  enqueuePushed(command: Command, to: PushedTo): Promise<boolean>;
  /**
   * The push did not reach its connection (gone): back to queued (RUN#), for any claim, but only while it is still
   * pushed to that connection and unacknowledged (nobody can have it). True when it was put back.
   */
  unpush(command: Command, connectionId: string): Promise<boolean>;
  /** The agent reported about a pushed command (its output): the PUSHED# entry and `pushedTo` removed. */
  acknowledgePush(commandId: string): Promise<void>;
  get(id: string): Promise<Command | undefined>;
  /** Every command of one deployment, oldest first. */
  listByDeployment(deploymentId: string): Promise<readonly Command[]>;
  /**
   * Moves up to `max` queued commands of the target to delivered (each a conditional write, so two polls never
   * both get one) and takes the target's pending cancel notices; oldest first. Commands pushed to `instance` and not
   * acknowledged are handed to it again (the same installation: it runs an id at most once), counted in `max`.
   */
  claimInbox(
    targetId: string,
    max: number,
    at: Date,
    instance?: string,
  ): Promise<{ commands: readonly Command[]; cancel: readonly string[] }>;
  /**
   * Stores chunks not stored yet (a retried seq is ignored) and returns the new ones. `acknowledgePush`: the output
   * of a pushed command also acknowledges its push (in the write that raises outputSeq when it can).
   */
  appendOutput(
    command: Command,
    chunks: readonly OutputChunk[],
    at: Date,
    options?: { readonly acknowledgePush?: boolean; readonly seqRaisedByCompletion?: boolean },
  ): Promise<readonly OutputChunk[]>;
  output(commandId: string): Promise<readonly StoredChunk[]>;
  /**
   * delivered -> completed; false when it was not delivered (already completed, cancelled). With `outputSeq` (the
   * highest seq of output the completion carried, stored by appendOutput with `seqRaisedByCompletion`), it is raised
   * in the same write, which then also requires the stored outputSeq to be lower. With `whole`, the command's output
   * tail (and, when given, the output itself) is stored too, and the write requires outputSeq to be still
   * `whole.seqWas` (no other output came meanwhile).
   */
  complete(commandId: string, result: CommandResult, outputSeq?: number, whole?: WholeOutput): Promise<boolean>;
  /**
   * `complete` with `whole`, without reading the command first (issue 37): the write also requires the command to be
   * `targetId`'s. Answers whether it completed, and the command: as it is now when it did, as it was when refused
   * (undefined when there is no such command).
   */
  completeAs(
    targetId: string,
    commandId: string,
    result: CommandResult,
    outputSeq: number | undefined,
    whole: WholeOutput,
  ): Promise<{ readonly completed: boolean; readonly command: Command | undefined }>;
  /** queued -> cancelled (never delivered), or delivered -> a cancel notice in the target's inbox. */
  requestCancel(command: Command, at: Date): Promise<void>;
}

/** Waits without blocking (the long poll). */
export interface Sleeper {
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Who is told what agents report (the deployments context: the event stream and the execution engine). */
/**
 * What a completion that carries a command's whole output stores with it: the output's tail, and the output itself
 * when it is small (`chunks`: then no chunk items are written; `output()` answers them all the same). `seqWas` is the
 * outputSeq it read: it holds only if that is still so.
 */
export interface WholeOutput {
  readonly tail: string;
  readonly seqWas: number;
  /** The output itself, received at `receivedAt` (the server's clock, as for chunk items). */
  readonly chunks?: readonly OutputChunk[];
  readonly receivedAt?: string;
}

export interface CommandListener {
  /** Chunks newly stored for a command (retries excluded), in seq order. */
  output(command: Command, chunks: readonly OutputChunk[]): Promise<void>;
  completed(command: Command): Promise<void>;
  /**
   * A report of a command completed already (a retry: the first report's answer, or its wake-up, may have been lost):
   * the engine is woken again, nothing else (no second analysis). Absent: nothing is done.
   */
  completedAgain?(command: Command): Promise<void>;
}
