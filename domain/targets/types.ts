// Targets (hosts running the agent), their enrollment and agent tokens, and the commands agents run.
import type { Interpreter, OutputChunk } from '../../protocol/messages.js';

/** A command's interpreter and its output travel as the agent protocol spells them. */
export type { Interpreter, OutputChunk, OutputStream } from '../../protocol/messages.js';

export interface Tag {
  readonly key: string;
  readonly value: string;
}

export type TargetStatus = 'online' | 'stale' | 'offline';

export interface Target {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly hostname: string;
  readonly os: string;
  readonly arch: string;
  readonly agentVersion: string;
  readonly tags: readonly Tag[];
  readonly tenantId: string | null;
  readonly environmentId: string | null;
  /** The hash of the target's agent token (the token itself is shown once, at registration). */
  readonly agentTokenHash: string;
  readonly lastHeartbeatAt: string | null;
  /**
   * The agent's open WebSocket (the API Gateway connection id) while it has one: commands are pushed to it. Absent
   * or null for an agent that polls, or is away.
   */
  readonly connectionId?: string | null;
  /**
   * The agent installation that holds the current connection (the `x-deployer-agent-instance` of its handshake):
   * commands are pushed only to a connection with one (decisions.md, "Commands pushed to the socket").
   */
  readonly connectionInstance?: string | null;
  /** When the current connection opened. */
  readonly connectedAt?: string | null;
  /** When the agent's last WebSocket closed (the disconnect). */
  readonly disconnectedAt?: string | null;
  /**
   * When the agent said goodbye (stopped cleanly: Ctrl-C, `systemctl stop`): offline at once, until it is heard from
   * again (any later heartbeat or connection moves lastHeartbeatAt past it).
   */
  readonly signedOffAt?: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface EnrollmentToken {
  readonly id: string;
  readonly tokenHash: string;
  /** Given to every target that enrolls with the token (the tags an agent sends are not applied). */
  readonly tags: readonly Tag[];
  /** How many registrations the token allows, and how many it has had (taken one at a time, conditionally). */
  readonly maxUses: number;
  readonly uses: number;
  readonly tenantId: string | null;
  readonly environmentId: string | null;
  /** What it is for, as its creator wrote it (absent on tokens made before it existed). */
  readonly description?: string | null;
  readonly createdBy: string;
  /** Who made it, as people read it (their name when it was made); absent on older tokens. */
  readonly createdByName?: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

/** An authenticated agent: it may act only for its own target. */
export interface AgentCaller {
  readonly kind: 'agent';
  readonly targetId: string;
  readonly tenantId: string | null;
  /** The target's last heartbeat as authentication read it (a sign of life is written only when it is older). */
  readonly heardAt?: string | null;
  /** The version the agent named on this request (x-deployer-agent-version), already checked to be compatible. */
  readonly agentVersion?: string;
}

/**
 * queued: waiting in the target's inbox; delivered: handed to the agent; completed: the agent reported an exit code;
 * cancelled: stopped before delivery. A delivered command may carry `cancelRequestedAt`: the agent is told to stop it.
 */
export type CommandStatus = 'queued' | 'delivered' | 'completed' | 'cancelled';

export interface Command {
  readonly id: string;
  readonly targetId: string;
  readonly deploymentId: string;
  readonly stepId: string;
  /** 1 for the first try of a step; every retry is a new command with the next attempt. */
  readonly attempt: number;
  readonly action: { readonly id: string; readonly slug: string; readonly version: string };
  readonly script: string;
  readonly interpreter: Interpreter;
  readonly variables: Readonly<Record<string, string>>;
  readonly secretVariables: readonly string[];
  /**
   * The values of `secretVariables` are kept sealed (`enc:` + ciphertext, SecretCipher context
   * `deployment-variable`, as in the deployment) and opened only in the poll answer to the agent that claims the
   * command. Absent on records made before (and by tests that enqueue plain values).
   */
  readonly sealedSecrets?: boolean;
  readonly timeoutSeconds: number | null;
  readonly status: CommandStatus;
  readonly createdAt: string;
  readonly deliveredAt: string | null;
  readonly cancelRequestedAt: string | null;
  /** The highest output seq accepted so far (-1: none). */
  readonly outputSeq: number;
  /**
   * The last OUTPUT_TAIL characters of the command's whole output, stored by its completion when that carried all of
   * it (no output came before): the engine's step_update takes it from here instead of reading the chunks. Absent
   * otherwise, and on records made before.
   */
  readonly outputTail?: string;
  /**
   * A command pushed over its agent's WebSocket (claimed for that connection when it was stored, status delivered)
   * and not acknowledged yet: it stays in the inbox (PUSHED#...) for the same installation to claim again, and the
   * engine pushes it again, until the agent's first report about it (output or completion) removes this.
   */
  readonly pushedTo?: PushedTo;
  /** The target's name when the command was made (log lines carry it without reading the target). */
  readonly targetName?: string;
  readonly result: CommandResult | null;
  /** A failed command's diagnosis, once failure analysis produced it (domain/analysis). */
  readonly analysis?: Readonly<Record<string, unknown>> | null;
}

/** Where a command was pushed: the connection, the installation holding it, when. */
export interface PushedTo {
  readonly connectionId: string;
  readonly instance: string;
  readonly at: string;
}

export interface CommandResult {
  readonly exitCode: number;
  readonly startedAt: string;
  readonly completedAt: string;
  readonly errorMessage: string | null;
}

/** One stored output chunk, with the time the server accepted it. */
export interface StoredChunk extends OutputChunk {
  readonly receivedAt: string;
}
