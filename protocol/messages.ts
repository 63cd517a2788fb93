// The messages of the agent protocol (decisions.md section 6) as they travel: the requests the agent sends, the
// server's answers and the WebSocket frames, in their wire spelling (snake_case). The agent builds and reads them; the
// service's agent endpoints take and give the same shapes.

export interface Tag {
  readonly key: string;
  readonly value: string;
}

export type Interpreter = 'sh' | 'bash' | 'node' | 'python3';
export type OutputStream = 'stdout' | 'stderr';

export interface RegisterRequest {
  readonly enrollment_token: string;
  readonly name: string;
  readonly hostname: string;
  readonly os: string;
  readonly arch: string;
  readonly agent_version: string;
  readonly tags: readonly Tag[];
}

export interface RegisterResponse {
  readonly target_id: string;
  readonly agent_token: string;
  readonly short_id?: string;
  /** The tags the server gave the target (its enrollment token's); absent from servers before 1.0.0's. */
  readonly tags?: readonly Tag[];
}

/** One step attempt to run. Every attempt of a step is a distinct command id. */
export interface AgentCommand {
  readonly id: string;
  readonly deployment_id: string;
  readonly step_id: string;
  readonly attempt: number;
  readonly action: { readonly id: string; readonly slug: string; readonly version: string };
  readonly script: string;
  readonly interpreter: Interpreter;
  readonly variables: Readonly<Record<string, string>>;
  readonly secret_variables: readonly string[];
  readonly timeout_seconds: number | null;
  readonly created_at: string;
}

export interface PollResponse {
  readonly commands: readonly AgentCommand[];
  readonly cancel: readonly string[];
}

export interface OutputChunk {
  readonly stream: OutputStream;
  readonly data: string;
  readonly seq: number;
}

export interface OutputResponse {
  readonly accepted: number;
  readonly cancel_requested: boolean;
}

export interface CompleteRequest {
  readonly exit_code: number;
  readonly started_at: string;
  readonly completed_at: string;
  readonly error_message?: string;
  /** The command's last output, when the server takes it with the completion (ChannelResponse.output_in_completion). */
  readonly output?: readonly OutputChunk[];
  /**
   * false: the agent keeps its own heartbeat cadence, so the server records no sign of life for this completion (one
   * write fewer per command). Absent (agents before 2026-11-29, which count an answered completion as a heartbeat):
   * recorded as before.
   */
  readonly sign_of_life?: boolean;
}

/** GET /api/v1/agent/channel: how to reach the server's push channel (null: it offers none; poll). */
export interface ChannelResponse {
  readonly socket_url: string | null;
  readonly heartbeat_seconds: number;
  readonly idle_ping_seconds: number;
  readonly poll_wait_seconds: number;
  /** The server takes a command's last output with its completion (one request instead of two). */
  readonly output_in_completion?: boolean;
  /** The agent build the server ships (null: none known; absent: a server from before releases). */
  readonly release?: AgentReleaseInfo | null;
  /** The agent versions the server takes, as a semver range (`>=1.0.0 <2.0.0`). */
  readonly accepted?: string;
}

/** A release the server ships: the bundle at `url` (a path on the server) with this SHA-256 (hex) and size. */
export interface AgentReleaseInfo {
  readonly version: string;
  readonly sha256: string;
  readonly size: number;
  readonly url: string;
}

/** Agent -> server frame on the WebSocket. */
/**
 * A poll (or a completion without `sign_of_life: false`) proves the agent alive as a heartbeat does: the server
 * records it as one, but writes the target at most once per this long (so the stored heartbeat may be this much older
 * than the request). The agent counts such an answered request as a heartbeat sent this long before it, and beats
 * again only a cadence after. Its completions say `sign_of_life: false` since 2026-11-29: they are not counted.
 */
export const SIGN_OF_LIFE_REFRESH_MS = 5_000;

export interface HeartbeatFrame {
  readonly action: 'heartbeat';
  readonly running_command_ids: readonly string[];
  /**
   * The agent's target: the server then records the heartbeat in one write conditioned on the target holding this
   * connection, instead of reading the connection's lookup item first (older agents leave it out).
   */
  readonly target_id?: string;
}

/** Server -> agent frames on the WebSocket (the agent ignores, and logs once, a type it does not know). */
export type ServerFrame =
  /** Commands wait in the inbox: claim them over HTTP. */
  | { readonly type: 'wake' }
  /** A command claimed for this connection (decisions.md, "Commands pushed to the socket"): run it. */
  | { readonly type: 'command'; readonly command: AgentCommand }
  /** Another connection of the same target took over; this one is closed. */
  | { readonly type: 'replaced' }
  /** The target was deleted; the connection is closed. */
  | { readonly type: 'revoked' }
  /** The server refused a frame the agent sent. */
  | { readonly type: 'error'; readonly error: { readonly code: string; readonly message: string } };
