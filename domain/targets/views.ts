// A target as the API shows it: the spec's fields with its status, and with the agent's compatibility for the
// targets endpoints and streams. A leaf over the status rules, read by the targets use cases, the agent channel and
// the webhooks.
import { agentOutdated, type AgentRelease } from './agent-release.js';
import { agentCompatible } from './compatibility.js';
import { statusOf } from './status.js';
import type { Target } from './types.js';

export const targetView = (target: Target, now: Date) => ({
  id: target.id,
  short_id: target.shortId,
  name: target.name,
  hostname: target.hostname,
  os: target.os,
  arch: target.arch,
  agent_version: target.agentVersion,
  tags: target.tags.map((t) => ({ key: t.key, value: t.value })),
  status: statusOf(target, now),
  last_heartbeat_at: target.lastHeartbeatAt,
  tenant_id: target.tenantId,
  environment_id: target.environmentId,
  created_at: target.createdAt,
});

export type TargetView = ReturnType<typeof targetView>;

/**
 * The target as the targets endpoints and streams show it: the spec's fields, `agent_compatible`, whether its agent
 * (the version it last named) is of this server's major version (false means its calls are refused), and
 * `agent_outdated`, whether that version is older than the agent build the service ships (false when none is known).
 */
export const targetViewWithAgent = (
  target: Target,
  now: Date,
  serverVersion: string,
  shipped?: AgentRelease | null,
) => ({
  ...targetView(target, now),
  agent_compatible: agentCompatible(target.agentVersion, serverVersion),
  agent_outdated: agentOutdated(target.agentVersion, shipped),
});
