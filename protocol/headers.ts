// The headers of the agent protocol (decisions.md section 6) and the error code that answers an agent of another
// major version: both sides read the same names from here.

/**
 * Names this installation (state folder) on the WebSocket handshake and on every authenticated request: the server
 * then pushes commands over the socket ({type: "command"}), and a claim gets back those pushed and not acknowledged.
 */
export const AGENT_INSTANCE_HEADER = 'x-deployer-agent-instance';

/** What an installation id looks like (the agent makes 32 hex digits); the server ignores anything else. */
export const AGENT_INSTANCE_PATTERN = /^[A-Za-z0-9-]{16,64}$/;

/**
 * Names this agent's version (agent/version.ts) on every request and on the WebSocket handshake: the server refuses
 * an agent of another major version than its own with 409 AGENT_VERSION_INCOMPATIBLE (api.md, "Versioning").
 */
export const AGENT_VERSION_HEADER = 'x-deployer-agent-version';

/** The error code of that refusal: the agent logs its message and stops (no retry can change the versions). */
export const AGENT_VERSION_INCOMPATIBLE = 'AGENT_VERSION_INCOMPATIBLE';
