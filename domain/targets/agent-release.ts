// The agent build this service ships (the one-file agent of programs/build.ts: its version, checksum, size and
// versioned path), as configuration tells it (AGENT_RELEASE; none when the agent was not built). Agents learn it at
// GET /api/v1/agent/channel and, started with --auto-update, fetch it when it is newer than themselves; the target
// list marks agents older than it as outdated.
import semver from 'semver';

export interface AgentRelease {
  readonly version: string;
  /** Hex SHA-256 of the bundle. */
  readonly sha256: string;
  readonly size: number;
  /** Where the front serves these bytes, e.g. `/agent/v1.0.1/deployer-agent.mjs` (immutable). */
  readonly path: string;
}

/** Whether an agent of `agentVersion` is older than the shipped release; false when none is shipped or unknown. */
export const agentOutdated = (agentVersion: string | null | undefined, shipped: AgentRelease | null | undefined) => {
  if (shipped === null || shipped === undefined || typeof agentVersion !== 'string') return false;
  const agent = semver.valid(agentVersion);
  const release = semver.valid(shipped.version);
  return agent !== null && release !== null && semver.lt(agent, release);
};

/** The release as GET /api/v1/agent/channel shows it: `url` is the versioned path, on the agent's own server. */
export const releaseView = (release: AgentRelease | null | undefined) =>
  release === null || release === undefined
    ? null
    : { version: release.version, sha256: release.sha256, size: release.size, url: release.path };
