// Who calls: the user credential (and its permission) or the agent, before anything reads the request's input.
import { authorize } from '../../../domain/identity/authenticate.js';
import { requireUserSession } from '../../../domain/identity/delegation.js';
import type { Caller } from '../../../domain/identity/types.js';
import type { AgentCaller } from '../../../domain/targets/types.js';
import { clientIp } from '../client-ip.js';
import { requestState, type Middleware } from './request-state.js';

/** Authorization header value and client address -> the caller, or a domain error (401/403 codes of the spec). */
export type Authenticator = (authorization: string | undefined, ip: string) => Promise<Caller>;
/**
 * Authorization header value and the request's headers (the agent's version) -> the agent, or a domain error (401
 * codes of the spec; 409 AGENT_VERSION_INCOMPATIBLE for an agent of another major version).
 */
export type AgentAuthenticator = (
  authorization: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
) => Promise<AgentCaller>;

/** Who may call: a user credential with a permission (or any), `user` credentials only (no API key), or an agent. */
export type Access =
  | {
      readonly kind: 'user';
      readonly authenticate: Authenticator;
      readonly permission: 'authenticated' | Parameters<typeof authorize>[1];
      readonly userOnly: boolean;
    }
  | { readonly kind: 'agent'; readonly authenticateAgent: AgentAuthenticator };

/** Authenticates the caller (and checks the permission) before anything reads the request's input. */
export const authentication = (access: Access): Middleware => ({
  before: async function authenticateCaller(request) {
    const state = requestState(request.context);
    const authorization = request.event.headers?.['authorization'];
    if (access.kind === 'agent') {
      const agent = await access.authenticateAgent(authorization, request.event.headers ?? {});
      if (state !== undefined) state.caller = agent;
      return;
    }
    const caller = await access.authenticate(authorization, clientIp(request.event));
    if (access.permission !== 'authenticated') authorize(caller, access.permission);
    if (access.userOnly) requireUserSession(caller, 'This');
    if (state !== undefined) state.caller = caller;
  },
});
