// The composition root, single sign-on part: identity providers and their mappings, sign-ins in flight, the users'
// links, and the guarded OIDC client (one per container: it caches each provider's JWKS).
import type { ProvidersDeps } from '../../domain/sso/providers.js';
import type { SsoDeps } from '../../domain/sso/sign-in.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoIdentityProviderRepository } from '../../infra/dynamodb/identity-provider-repository.js';
import { DynamoRoleRepository } from '../../infra/dynamodb/role-repository.js';
import { DynamoSignInStates } from '../../infra/dynamodb/sso-state-repository.js';
import { DynamoTenantRepository } from '../../infra/dynamodb/tenant-repository.js';
import { DynamoUserRepository } from '../../infra/dynamodb/user-repository.js';
import { parseAllowedHosts, urlProblem } from '../../infra/net/address-policy.js';
import { JoseOidcGateway } from '../../infra/oidc/oidc-gateway.js';
import { secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { ids, infra } from './wiring.js';

/** The largest answer accepted from a provider (discovery documents and JWKS are a few kilobytes). */
const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;

const allowedHosts = once(() => parseAllowedHosts(infra().config.OIDC_ALLOWED_HOSTS));

const oidc = once(() => {
  const cfg = infra().config;
  return new JoseOidcGateway({
    allowedHosts: allowedHosts(),
    timeoutMs: cfg.OIDC_HTTP_TIMEOUT_MS,
    maxBytes: MAX_PROVIDER_ANSWER_BYTES,
    maxRedirects: 3,
    jwksCooldownMs: cfg.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
  });
});

const providers = once(() => new DynamoIdentityProviderRepository(infra().db, infra().config.TABLE_NAME));
const users = once(() => new DynamoUserRepository(infra().db, infra().config.TABLE_NAME));
const roles = once(() => new DynamoRoleRepository(infra().db, infra().config.TABLE_NAME));

const publicBaseUrl = (): string => infra().config.PUBLIC_BASE_URL.replace(/\/+$/, '');

export const providersDeps = once((): ProvidersDeps => ({
  providers: providers(),
  roles: roles(),
  users: users(),
  tenants: new DynamoTenantRepository(infra().db, infra().config.TABLE_NAME),
  cipher: secretCipher(),
  oidc: oidc(),
  ids: ids(),
  clock: infra().clock,
  publicBaseUrl: publicBaseUrl(),
  endpointProblem: (url) => urlProblem(allowedHosts(), url),
}));

export const ssoDeps = once((): SsoDeps => ({
  providers: providers(),
  states: new DynamoSignInStates(infra().db, infra().config.TABLE_NAME),
  users: users(),
  roles: roles(),
  oidc: oidc(),
  cipher: secretCipher(),
  random: randomTokens,
  ids: ids(),
  clock: infra().clock,
  publicBaseUrl: publicBaseUrl(),
  stateTtlSeconds: infra().config.SSO_STATE_TTL_SECONDS,
}));
