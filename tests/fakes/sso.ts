// In-memory fakes of the single sign-on ports, with the adapters' contracts: uniqueness of names and issuers per scope,
// linked-user counting, single-use states, links unique per subject. The OIDC gateway fake "verifies" an ID token
// that is the JSON of its claims (the real one, with jose, is exercised end to end in tests/e2e/sso-*.test.ts).
import { ConflictError } from '../../domain/errors.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import type { IdentityLink, User, UserChanges } from '../../domain/identity/types.js';
import type { ProvidersDeps } from '../../domain/sso/providers.js';
import {
  ProviderRequestError,
  type IdentityProviderRepository,
  type LinkedUsers,
  type OidcGateway,
  type SignInChanges,
  type SignInStates,
  type TokenEndpointProbe,
} from '../../domain/sso/ports.js';
import type { SsoDeps } from '../../domain/sso/sign-in.js';
import type {
  DiscoveredEndpoints,
  IdentityProvider,
  IdTokenClaims,
  RoleMapping,
  SignInState,
} from '../../domain/sso/types.js';
import { AesGcmSecretCipher } from '../../infra/crypto/secret-cipher.js';
import { FakeClock } from './clock.js';
import { FakeRoleRepository, FakeUserStore, fakeIds, fakeRandom } from './identity.js';
import { FakeTenantRepository } from './tenancy.js';

export class FakeProviderRepository implements IdentityProviderRepository {
  readonly providers = new Map<string, IdentityProvider>();
  readonly mappings = new Map<string, RoleMapping>();

  #taken(p: IdentityProvider) {
    for (const other of this.providers.values()) {
      if (other.id === p.id || other.tenantId !== p.tenantId) continue;
      if (other.name.toLowerCase() === p.name.toLowerCase()) throw new ConflictError('name taken', { field: 'name' });
      if (other.issuer === p.issuer) throw new ConflictError('issuer taken', { field: 'issuer' });
    }
  }
  async create(provider: IdentityProvider) {
    this.#taken(provider);
    this.providers.set(provider.id, provider);
  }
  async get(id: string) {
    return [...this.providers.values()].find((p) => p.id === id || p.shortId === id);
  }
  async list(tenant: string | null | 'all') {
    return [...this.providers.values()].filter((p) => tenant === 'all' || p.tenantId === tenant);
  }
  async update(previous: IdentityProvider, next: IdentityProvider) {
    const stored = this.providers.get(previous.id);
    if (stored === undefined || stored.revision !== previous.revision) throw new ConflictError('changed');
    this.#taken(next);
    this.providers.set(next.id, { ...next, linkedUsers: stored.linkedUsers });
  }
  async delete(provider: IdentityProvider) {
    if ((this.providers.get(provider.id)?.linkedUsers ?? 0) > 0) throw new ConflictError('linked');
    this.providers.delete(provider.id);
  }
  async listMappings(providerId: string) {
    return [...this.mappings.values()].filter((m) => m.providerId === providerId);
  }
  async putMapping(mapping: RoleMapping) {
    this.mappings.set(mapping.id, mapping);
  }
  async deleteMapping(mapping: RoleMapping) {
    this.mappings.delete(mapping.id);
  }
  countLink(providerId: string, delta: number) {
    const p = this.providers.get(providerId);
    if (p !== undefined) this.providers.set(p.id, { ...p, linkedUsers: p.linkedUsers + delta });
  }
}

export class FakeSignInStates implements SignInStates {
  readonly states = new Map<string, SignInState>();
  async put(state: SignInState) {
    this.states.set(state.stateHash, state);
  }
  async consume(stateHash: string, now: Date) {
    const state = this.states.get(stateHash);
    this.states.delete(stateHash);
    return state !== undefined && state.expiresAt > now.getTime() ? state : undefined;
  }
}

/** Users with links: a subject is linked to one user; linking counts on the provider. */
export class FakeLinkedUserStore extends FakeUserStore implements LinkedUsers {
  constructor(private readonly providers: FakeProviderRepository) {
    super();
  }
  override async create(user: User) {
    if (user.identityLink && (await this.findByLink(user.identityLink.providerId, user.identityLink.subject)))
      throw new ConflictError('subject linked', { field: 'identity_provider' });
    await super.create(user);
    if (user.identityLink) this.providers.countLink(user.identityLink.providerId, 1);
  }
  async findByLink(providerId: string, subject: string) {
    return [...this.users.values()].find(
      (u) => u.identityLink?.providerId === providerId && u.identityLink.subject === subject,
    );
  }
  async link(user: User, link: IdentityLink) {
    const stored = this.users.get(user.id);
    if (stored === undefined || stored.revision !== user.revision || stored.identityLink) return false;
    if (await this.findByLink(link.providerId, link.subject)) return false;
    this.users.set(user.id, { ...stored, identityLink: link, revision: stored.revision + 1 });
    this.providers.countLink(link.providerId, 1);
    return true;
  }
  /** An admin edit; with `unlink`, the link ends in the same write (and is counted off the provider). */
  override async update(previous: User, changes: UserChanges, at: Date, unlink?: IdentityLink) {
    if (!(await super.update(previous, changes, at))) return false;
    if (unlink !== undefined) {
      const stored = this.users.get(previous.id)!;
      this.users.set(previous.id, { ...stored, identityLink: null, mappedRoles: [] });
      this.providers.countLink(unlink.providerId, -1);
    }
    return true;
  }
  async applySignIn(user: User, changes: SignInChanges) {
    const stored = this.users.get(user.id);
    if (stored === undefined || stored.revision !== user.revision) return false;
    this.users.set(user.id, { ...stored, ...changes, revision: stored.revision + 1 });
    return true;
  }
}

/** ID tokens are `fake.<JSON of the claims>`; `refuse` makes verification fail like a bad signature. */
export class FakeOidcGateway implements OidcGateway {
  claims: Record<string, unknown> = { sub: 'subject-1' };
  refuse = false;
  probe: TokenEndpointProbe = { status: 400, error: 'invalid_grant' };
  /** What discovery answers; undefined: a document of the issuer asked for (every provider created is reachable). */
  discovered: DiscoveredEndpoints | ProviderRequestError | undefined = undefined;
  readonly discoveries: string[] = [];
  /** Thrown by exchangeCode (a refusal or a failure of the token endpoint), and by verifyIdToken (the JWKS). */
  exchangeFailure: ProviderRequestError | undefined = undefined;
  keysFailure: ProviderRequestError | undefined = undefined;
  readonly exchanges: { code: string; codeVerifier: string; redirectUri: string }[] = [];

  async discover(issuer: string): Promise<DiscoveredEndpoints> {
    this.discoveries.push(issuer);
    if (this.discovered instanceof ProviderRequestError) throw this.discovered;
    return (
      this.discovered ?? {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: null,
        jwks_uri: `${issuer}/jwks`,
        scopes_supported: [],
        claims_supported: [],
        id_token_signing_alg_values_supported: [],
        token_endpoint_auth_methods_supported: [],
        code_challenge_methods_supported: [],
      }
    );
  }
  async jwksKeyCount() {
    return 1;
  }
  async probeTokenEndpoint() {
    return this.probe;
  }
  async exchangeCode(
    _p: IdentityProvider,
    _secret: string,
    exchange: { code: string; codeVerifier: string; redirectUri: string },
  ) {
    this.exchanges.push(exchange);
    if (this.exchangeFailure !== undefined) throw this.exchangeFailure;
    return { idToken: `fake.${JSON.stringify(this.claims)}` };
  }
  async verifyIdToken(_p: IdentityProvider, idToken: string): Promise<IdTokenClaims> {
    if (this.keysFailure !== undefined) throw this.keysFailure;
    if (this.refuse) throw new InvalidTokenError('The ID token signature does not verify.');
    return JSON.parse(idToken.slice('fake.'.length)) as IdTokenClaims;
  }
}

export const ssoFakes = () => {
  const clock = new FakeClock(new Date('2026-11-25T10:00:00.000Z'));
  const providers = new FakeProviderRepository();
  const users = new FakeLinkedUserStore(providers);
  const roles = new FakeRoleRepository();
  const tenants = new FakeTenantRepository();
  const oidc = new FakeOidcGateway();
  const states = new FakeSignInStates();
  const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 9) } });
  const ids = fakeIds();
  const admin: ProvidersDeps = {
    providers,
    roles,
    users,
    tenants,
    cipher,
    oidc,
    ids,
    clock,
    publicBaseUrl: 'https://deployer.example',
    endpointProblem: (url) => (url.startsWith('https://') ? undefined : 'must be an https URL'),
  };
  const sso: SsoDeps = {
    providers,
    states,
    users,
    roles,
    oidc,
    cipher,
    random: fakeRandom(),
    ids,
    clock,
    publicBaseUrl: 'https://deployer.example',
    stateTtlSeconds: 600,
  };
  return { admin, sso, clock, providers, users, roles, tenants, oidc, states, cipher };
};
