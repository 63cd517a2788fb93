// The component compatibility rule (api.md, "Versioning", point 3) and where the targets context applies it:
// register, every agent call, the WebSocket handshake, the target views.
import { describe, expect, it } from 'vitest';
import pkg from '../../../../package.json' with { type: 'json' };
import { AGENT_VERSION } from '../../../../agent/version.js';
import { AGENT_VERSION_HEADER } from '../../../../protocol/headers.js';
import { connectAgent } from '../../../../domain/targets/agent-channel.js';
import { admitAgent, heartbeat } from '../../../../domain/targets/agent-protocol.js';
import {
  acceptedAgentVersions,
  agentCompatible,
  agentVersionOf,
  checkAgentVersion,
  IncompatibleAgentError,
} from '../../../../domain/targets/compatibility.js';
import { createEnrollmentToken, listEnrollmentTokens, registerAgent } from '../../../../domain/targets/enrollment.js';
import { getTarget, listTargets } from '../../../../domain/targets/targets.js';
import { PERMISSIONS } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { FakeAgentConnections, targetsFakes } from '../../../fakes/targets.js';

const admin: Caller = {
  kind: 'user',
  userId: 'u1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(PERMISSIONS.map((p) => p.name)),
};
const host = { name: 'web-1', hostname: 'web-1.local', os: 'linux', arch: 'x64', tags: [] };

const enrolled = async () => {
  const fakes = targetsFakes();
  const token = await createEnrollmentToken(fakes.deps, admin, { expires_in_hours: 1, max_uses: 5 });
  const agent = await registerAgent(fakes.deps, { ...host, agent_version: '1.0.0', enrollment_token: token.token });
  return { ...fakes, token, targetId: agent.target_id, auth: `Bearer ${agent.agent_token}` };
};

describe('the compatibility rule: the same major version', () => {
  it.each([
    ['1.0.0', '1.0.0', true],
    ['1.9.3', '1.0.0', true], // a newer minor agent
    ['1.0.0', '1.7.0', true], // an older minor agent: backward compatible within the major version
    ['1.2.0-rc.1', '1.0.0', true], // a prerelease of the same major version
    ['v1.2.3', '1.0.0', true],
    ['2.0.0', '1.0.0', false], // newer major
    ['2.0.0-beta.1', '1.0.0', false], // a prerelease of the next major is of that major
    ['0.9.0', '1.0.0', false], // older major
    ['1.0.0', '2.1.0', false], // the server upgraded, the agent not
    ['latest', '1.0.0', false], // not a version: never compatible
    ['', '1.0.0', false],
  ])('agent %s with server %s: %s', (agent, server, compatible) => {
    expect(agentCompatible(agent, server)).toBe(compatible);
  });

  it('says the accepted versions as a semver range', () => {
    expect(acceptedAgentVersions('1.0.0')).toBe('>=1.0.0 <2.0.0');
    expect(acceptedAgentVersions('2.3.1')).toBe('>=2.0.0 <3.0.0');
  });

  it('refuses with 409 AGENT_VERSION_INCOMPATIBLE naming both versions and the way out', () => {
    const newer = new IncompatibleAgentError('2.0.0', '1.0.0');
    expect(newer).toMatchObject({
      kind: 'conflict',
      code: 'AGENT_VERSION_INCOMPATIBLE',
      details: { agent_version: '2.0.0', accepted: '>=1.0.0 <2.0.0', server_version: '1.0.0' },
    });
    expect(newer.message).toMatch(/Agent 2\.0\.0 .* server 1\.0\.0.*>=1\.0\.0 <2\.0\.0.*run an agent 1\.x/);
    expect(new IncompatibleAgentError('1.4.0', '2.0.0').message).toMatch(/upgrade the agent to 2\.x/);
  });

  it('judges a call without a version as 1.0.0 (every agent built before the header is 1.0.0)', () => {
    expect(() => checkAgentVersion(undefined, '1.3.0')).not.toThrow();
    expect(() => checkAgentVersion(undefined, '2.0.0')).toThrow(IncompatibleAgentError);
    expect(() => checkAgentVersion('2.0.0', '1.0.0')).toThrow(/Agent 2\.0\.0/);
  });

  it('reads the header in any case, and refuses one that is not a semantic version (400)', () => {
    expect(agentVersionOf({ 'X-Deployer-Agent-Version': '1.2.0' })).toBe('1.2.0');
    expect(agentVersionOf({ authorization: 'Bearer x' })).toBeUndefined();
    expect(() => agentVersionOf({ [AGENT_VERSION_HEADER]: 'latest' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    );
    expect(() => agentVersionOf({ [AGENT_VERSION_HEADER]: `1.0.0-${'x'.repeat(80)}` })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    );
  });

  it('takes the agent built from this checkout', () => {
    expect(agentCompatible(AGENT_VERSION, pkg.version)).toBe(true);
  });
});

describe('register', () => {
  it('refuses an agent of another major version before the token is used: the token keeps its uses', async () => {
    // Arrange
    const { deps, token } = await enrolled();
    // Act
    const refused = registerAgent(deps, { ...host, agent_version: '2.0.0', enrollment_token: token.token });
    // Assess
    await expect(refused).rejects.toMatchObject({ code: 'AGENT_VERSION_INCOMPATIBLE' });
    const [listed] = (await listEnrollmentTokens(deps, admin, { page: 1, limit: 10 })).data;
    expect(listed?.uses).toBe(1); // the registration of enrolled() only
    expect((await listTargets(deps, admin, { page: 1, limit: 10 })).data).toHaveLength(1);
  });

  it('refuses a registration whose x-deployer-agent-version is of another major version, whatever the body says', async () => {
    const { deps, token } = await enrolled();
    await expect(
      registerAgent(deps, { ...host, agent_version: '1.0.0', enrollment_token: token.token }, '2.0.0'),
    ).rejects.toMatchObject({ code: 'AGENT_VERSION_INCOMPATIBLE', details: { agent_version: '2.0.0' } });
    expect((await listEnrollmentTokens(deps, admin, { page: 1, limit: 10 })).data[0]?.uses).toBe(1);
  });

  it('refuses an agent_version that is not a semantic version (400), and takes any 1.x', async () => {
    const { deps, token } = await enrolled();
    await expect(
      registerAgent(deps, { ...host, agent_version: 'test', enrollment_token: token.token }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'agent_version' }] } });
    const taken = await registerAgent(deps, { ...host, agent_version: '1.4.2', enrollment_token: token.token });
    expect((await getTarget(deps, admin, taken.target_id)).agent_version).toBe('1.4.2');
  });
});

describe('every agent call', () => {
  it('refuses an agent of another major version, records the version it named, and takes no heartbeat', async () => {
    // Arrange
    const { deps, clock, auth, targetId } = await enrolled();
    const before = await getTarget(deps, admin, targetId);
    clock.advance(10_000);
    // Act
    const refused = admitAgent(deps, auth, '2.0.0');
    // Assess
    await expect(refused).rejects.toMatchObject({ code: 'AGENT_VERSION_INCOMPATIBLE' });
    const after = await getTarget(deps, admin, targetId);
    expect(after).toMatchObject({ agent_version: '2.0.0', agent_compatible: false });
    expect(after.last_heartbeat_at).toBe(before.last_heartbeat_at);
  });

  it('takes a 1.x agent, and stores the version an upgraded agent names with its heartbeat', async () => {
    // Arrange
    const { deps, auth, targetId } = await enrolled();
    // Act
    const agent = await admitAgent(deps, auth, '1.3.0');
    await heartbeat(deps, agent);
    // Assess
    expect(await getTarget(deps, admin, targetId)).toMatchObject({ agent_version: '1.3.0', agent_compatible: true });
  });

  it('takes a call without a version, and leaves the stored version alone', async () => {
    const { deps, auth, targetId } = await enrolled();
    await heartbeat(deps, await admitAgent(deps, auth, undefined));
    expect(await getTarget(deps, admin, targetId)).toMatchObject({ agent_version: '1.0.0', agent_compatible: true });
  });

  it('shows a target as incompatible once the server is of another major version', async () => {
    const { deps, targetId } = await enrolled();
    const upgraded = { ...deps, settings: { ...deps.settings, serverVersion: '2.0.0' } };
    expect((await listTargets(upgraded, admin, { page: 1, limit: 10 })).data[0]).toMatchObject({
      id: targetId,
      agent_version: '1.0.0',
      agent_compatible: false,
    });
  });
});

describe('the WebSocket handshake', () => {
  it('fails for an agent of another major version (no connection stored), and stores the version of a 1.x one', async () => {
    // Arrange
    const { deps, auth, targetId, targets } = await enrolled();
    const channel = { ...deps, connections: new FakeAgentConnections() };
    // Act
    const refused = connectAgent(channel, auth, 'conn-1', undefined, '3.1.0');
    // Assess
    await expect(refused).rejects.toMatchObject({ code: 'AGENT_VERSION_INCOMPATIBLE' });
    expect((await targets.get(targetId))?.connectionId ?? null).toBeNull();
    // Act
    await connectAgent(channel, auth, 'conn-2', undefined, '1.5.0');
    // Assess
    expect(await targets.get(targetId)).toMatchObject({ connectionId: 'conn-2', agentVersion: '1.5.0' });
  });
});
