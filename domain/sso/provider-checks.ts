// Admin: an identity provider's discovery (the endpoints its issuer publishes) and the connection test of one as
// configured (discovery, JWKS, token endpoint), each check saying what it found.
import { ValidationError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { ProviderRequestError } from './ports.js';
import { findProvider, normalizeIssuer, redirectUriOf, secretContext, type ProvidersDeps } from './providers.js';

/** The issuer URL an administrator typed, or the full discovery URL: the issuer either way. */
const issuerOf = (url: string): string =>
  normalizeIssuer(url.trim().replace(/\/\.well-known\/openid-configuration\/?$/, ''));

export const discoverEndpoints = async (deps: ProvidersDeps, url: string) => {
  const issuer = issuerOf(url);
  const problem = deps.endpointProblem(issuer);
  if (problem !== undefined) throw ValidationError.field('url', problem);
  try {
    return await deps.oidc.discover(issuer);
  } catch (error) {
    if (error instanceof ProviderRequestError) throw ValidationError.field('url', error.message);
    throw error;
  }
};

export interface ConnectionCheck {
  readonly name: 'discovery' | 'jwks' | 'token_endpoint';
  readonly passed: boolean;
  readonly message: string;
}

const check = async (name: ConnectionCheck['name'], run: () => Promise<string>): Promise<ConnectionCheck> => {
  try {
    return { name, passed: true, message: await run() };
  } catch (error) {
    if (error instanceof ProviderRequestError) return { name, passed: false, message: error.message };
    throw error;
  }
};

/**
 * Checks a provider as configured: its discovery document answers with its issuer, its JWKS parses into keys, and
 * its token endpoint answers a client-authenticated request (an `invalid_grant` for the made-up code proves it knows
 * the client; `invalid_client` or any non-OAuth answer fails). 200 either way; each check says what it found.
 */
export const testProvider = async (deps: ProvidersDeps, caller: Caller, id: string) => {
  const provider = await findProvider(deps, caller, id);
  const checks = [
    await check('discovery', async () => {
      const found = await deps.oidc.discover(provider.issuer);
      return `The discovery document names issuer ${found.issuer}.`;
    }),
    await check('jwks', async () => {
      const count = await deps.oidc.jwksKeyCount(provider.jwksUri);
      if (count === 0) throw new ProviderRequestError('The JWKS has no usable signing key.');
      return `The JWKS has ${count} key${count === 1 ? '' : 's'}.`;
    }),
    await check('token_endpoint', async () => {
      const secret = deps.cipher.decrypt(provider.clientSecret, secretContext(provider.id));
      const probe = await deps.oidc.probeTokenEndpoint(
        provider,
        secret,
        redirectUriOf(deps.publicBaseUrl, provider.id),
      );
      if (probe.error === 'invalid_grant' || probe.error === 'invalid_request')
        return `The token endpoint authenticated the client (it answered ${probe.error} for a made-up code).`;
      if (probe.error === 'invalid_client' || probe.error === 'unauthorized_client')
        throw new ProviderRequestError(`The token endpoint refused the client credentials (${probe.error}).`);
      throw new ProviderRequestError(
        `The token endpoint did not answer a made-up code as OAuth 2.0 says (${probe.error ?? (probe.status >= 200 && probe.status < 300 ? '2xx' : 'not 2xx')}).`,
      );
    }),
  ];
  return {
    provider_id: provider.id,
    success: checks.every((c) => c.passed),
    checks,
    tested_at: deps.clock.now().toISOString(),
  };
};
