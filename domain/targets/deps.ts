// The ports and settings the targets context's use cases receive (wired in functions/shared/targets-wiring.ts).
import type { EnvironmentLookup, TenantLookup } from '../shared/lookups.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { SecretCipher, TokenGenerator } from '../identity/ports.js';
import type { AgentRelease } from './agent-release.js';
import type {
  AgentDispatch,
  CommandListener,
  CommandRepository,
  EnrollmentTokenRepository,
  Sleeper,
  TargetRepository,
} from './ports.js';

/** What an agent learns at `GET /api/v1/agent/channel`: where to connect and how often to speak. */
export interface ChannelSettings {
  /** The WebSocket URL agents connect to; null when the service offers none (agents poll). */
  readonly socketUrl: string | null;
  /** While a command runs: at most this long between heartbeats (the dead-agent rule allows 60 s). */
  readonly heartbeatSeconds: number;
  /** While idle, a ping this often keeps the connection (API Gateway closes one idle for 10 minutes). */
  readonly idlePingSeconds: number;
  /** An agent that cannot open the socket long-polls with this wait. */
  readonly pollWaitSeconds: number;
}

export interface TargetsDeps {
  readonly targets: TargetRepository;
  readonly enrollmentTokens: EnrollmentTokenRepository;
  readonly commands: CommandRepository;
  readonly tenants: TenantLookup;
  readonly environments: EnvironmentLookup;
  readonly random: TokenGenerator;
  /** Opens a command's sealed secret values for the agent that claims it. */
  readonly cipher: SecretCipher;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly sleeper: Sleeper;
  /** Told about output and completions (the execution engine and the event stream). */
  readonly listener?: CommandListener;
  /** How agents are reached between their polls: their WebSockets, or no channel (agent-dispatch.ts). */
  readonly dispatch: AgentDispatch;
  readonly settings: {
    /** This build's version (package.json): agents of its major version are taken (compatibility.ts). */
    readonly serverVersion: string;
    /** How often a long poll looks at the inbox again while it waits. */
    readonly pollIntervalMs: number;
    /** What `GET /api/v1/agent/channel` tells agents (absent: no socket, poll). */
    readonly channel?: ChannelSettings;
    /** The agent build this service ships (agent-release.ts); null or absent: none known. */
    readonly agentRelease?: AgentRelease | null;
  };
}
