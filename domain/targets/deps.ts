import type { EnvironmentLookup, TenantLookup } from '../shared/lookups.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { SecretCipher, TokenGenerator } from '../identity/ports.js';
import type { ChannelSettings } from './agent-channel.js';
import type { AgentRelease } from './agent-release.js';
import type {
  AgentConnections,
  CommandListener,
  CommandRepository,
  EnrollmentTokenRepository,
  Sleeper,
  TargetRepository,
} from './ports.js';

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
  /** The agents' open WebSockets (absent: the service offers none, agents poll). */
  readonly connections?: AgentConnections;
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
