/** The agent's version, reported at registration as `agent_version`. */
export const AGENT_VERSION = '1.0.0';
