// The service and the agent speak the same messages: what the service builds for the agent is the wire shape the
// agent reads (checked by the compiler), and the headers are one set of names.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { commandForAgent } from '../../../domain/targets/agent-protocol.js';
import { AGENT_INSTANCE_HEADER, AGENT_INSTANCE_PATTERN, AGENT_VERSION_HEADER } from '../../../protocol/headers.js';
import type { AgentCommand } from '../../../protocol/messages.js';

describe('the agent protocol', () => {
  it('has the service hand out commands in the shape the agent reads', () => {
    expectTypeOf<ReturnType<typeof commandForAgent>>().toMatchTypeOf<AgentCommand>();
  });

  it('names its headers in lower case, as both sides compare them', () => {
    for (const header of [AGENT_INSTANCE_HEADER, AGENT_VERSION_HEADER]) expect(header).toBe(header.toLowerCase());
  });

  it('takes the installation ids the agent makes (32 hex digits) and nothing that could be a path or a header', () => {
    expect(AGENT_INSTANCE_PATTERN.test('0123456789abcdef0123456789abcdef')).toBe(true);
    expect(AGENT_INSTANCE_PATTERN.test('short')).toBe(false);
    expect(AGENT_INSTANCE_PATTERN.test('../../../etc/passwd-0123456789')).toBe(false);
    expect(AGENT_INSTANCE_PATTERN.test('0123456789abcdef\r\nx: y')).toBe(false);
  });
});
