// Component compatibility (api.md, "Versioning", point 3): the orchestration server and the agent are backward
// compatible within a major version, so the server takes agents of its own major version (any minor, patch or
// prerelease of it) and refuses the others, newer or older, at registration, at the WebSocket handshake and on
// every agent request. An agent names its version in `agent_version` at registration and in the
// `x-deployer-agent-version` header on every other call; a call without the header comes from an agent built before
// the header existed, and every such build is 1.0.0: it is judged as 1.0.0 (taken by a 1.x server, refused by 2.x).
import semver from 'semver';
import { AGENT_VERSION_HEADER, AGENT_VERSION_INCOMPATIBLE } from '../../protocol/headers.js';
import { DomainError, ValidationError } from '../errors.js';

/** The agent versions a server of `serverVersion` takes, as a semver range: its own major version. */
export const acceptedAgentVersions = (serverVersion: string): string => {
  const major = semver.major(serverVersion);
  return `>=${major}.0.0 <${major + 1}.0.0`;
};

/** Whether an agent of `agentVersion` may work with a server of `serverVersion`: the same major version. */
export const agentCompatible = (agentVersion: string, serverVersion: string): boolean => {
  const parsed = semver.parse(agentVersion);
  return parsed !== null && parsed.major === semver.major(serverVersion);
};

/** 409: an agent of another major version than the server's. The message names both versions and the way out. */
export class IncompatibleAgentError extends DomainError {
  readonly kind = 'conflict' as const;
  constructor(agentVersion: string, serverVersion: string) {
    const accepted = acceptedAgentVersions(serverVersion);
    const serverMajor = semver.major(serverVersion);
    const agentMajor = semver.parse(agentVersion)?.major ?? serverMajor;
    const remedy =
      agentMajor > serverMajor
        ? `upgrade the server to ${agentMajor}.x or run an agent ${serverMajor}.x`
        : `upgrade the agent to ${serverMajor}.x`;
    super(
      AGENT_VERSION_INCOMPATIBLE,
      `Agent ${agentVersion} is not compatible with this server ${serverVersion}: it accepts agents ${accepted} (the same major version); ${remedy}.`,
      { agent_version: agentVersion, accepted, server_version: serverVersion },
    );
  }
}

/** The version an agent claims, checked to be a semantic version (400 naming `field` otherwise). */
export const parseAgentVersion = (value: string, field: string): string => {
  if (value.length > 64 || semver.valid(value) === null)
    throw ValidationError.field(field, `must be a semantic version such as 1.0.0 (got '${value.slice(0, 64)}')`);
  return value;
};

/** What an agent that names no version is: a build from before the header, all of which are 1.0.0. */
export const UNNAMED_AGENT_VERSION = '1.0.0';

/**
 * The version named by the request's `x-deployer-agent-version` header (any case); undefined without one. A header
 * that is not a semantic version is refused (400).
 */
export const agentVersionOf = (
  headers: Readonly<Record<string, string | undefined>> | undefined,
): string | undefined => {
  const value = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === AGENT_VERSION_HEADER)?.[1];
  return value === undefined ? undefined : parseAgentVersion(value.trim(), AGENT_VERSION_HEADER);
};

/** Refuses (409) an agent of another major version than the server's; an unnamed one counts as 1.0.0. */
export const checkAgentVersion = (agentVersion: string | undefined, serverVersion: string): void => {
  const judged = agentVersion ?? UNNAMED_AGENT_VERSION;
  if (!agentCompatible(judged, serverVersion)) throw new IncompatibleAgentError(judged, serverVersion);
};
