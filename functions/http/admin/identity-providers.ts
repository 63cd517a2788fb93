// handlers -> domain/sso/providers.ts -> IdentityProviderRepository, OidcGateway: the eleven Admin: identity providers
// endpoints (api.md; shapes in docs/decisions.md "Single sign-on"). The client secret is write-only (`***`).
import * as v from 'valibot';
import { discoverEndpoints, testProvider } from '../../../domain/sso/provider-checks.js';
import {
  createProvider,
  deleteProvider,
  getProvider,
  listProviders,
  updateProvider,
  type ProvidersDeps,
} from '../../../domain/sso/providers.js';
import { createMapping, deleteMapping, listMappings, updateMapping } from '../../../domain/sso/role-mappings.js';
import { ID_TOKEN_ALGORITHMS, TOKEN_AUTH_METHODS } from '../../../domain/sso/types.js';
import { http } from '../../shared/http.js';
import { MetaSchema, Name, PageQuery, PathId } from '../../shared/schemas.js';

const Url = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(2000));
const ClaimName = v.pipe(v.string(), v.trim(), v.regex(/^[\w.:/-]{1,100}$/, 'must be a claim name'));
const Scope = v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, 'must be an OAuth scope token'));
const TenantId = v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(64)));

const Settings = {
  name: Name,
  issuer: Url,
  client_id: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(500)),
  client_secret: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(2000)),
  token_endpoint_auth_method: v.picklist(TOKEN_AUTH_METHODS, `must be one of ${TOKEN_AUTH_METHODS.join(', ')}`),
  scopes: v.pipe(v.array(Scope), v.minLength(1), v.maxLength(30)),
  authorization_endpoint: Url,
  token_endpoint: Url,
  userinfo_endpoint: v.nullable(Url),
  jwks_uri: Url,
  id_token_signing_alg_values: v.pipe(
    v.array(v.picklist(ID_TOKEN_ALGORITHMS, `must be one of ${ID_TOKEN_ALGORITHMS.join(', ')}`)),
    v.minLength(1),
    v.maxLength(ID_TOKEN_ALGORITHMS.length),
  ),
  email_claim: ClaimName,
  groups_claim: ClaimName,
  jit_provisioning: v.boolean(),
  jit_tenant_id: TenantId,
  jit_trust_unverified_email: v.boolean(),
  link_by_email: v.boolean(),
  trusted_for_2fa: v.boolean(),
  enabled: v.boolean(),
};

const CreateBody = v.object({
  name: Settings.name,
  issuer: Settings.issuer,
  client_id: Settings.client_id,
  client_secret: Settings.client_secret,
  authorization_endpoint: Settings.authorization_endpoint,
  token_endpoint: Settings.token_endpoint,
  jwks_uri: Settings.jwks_uri,
  token_endpoint_auth_method: v.optional(Settings.token_endpoint_auth_method),
  scopes: v.optional(Settings.scopes),
  userinfo_endpoint: v.optional(Settings.userinfo_endpoint),
  id_token_signing_alg_values: v.optional(Settings.id_token_signing_alg_values),
  email_claim: v.optional(Settings.email_claim),
  groups_claim: v.optional(Settings.groups_claim),
  jit_provisioning: v.optional(Settings.jit_provisioning),
  jit_tenant_id: v.optional(Settings.jit_tenant_id),
  jit_trust_unverified_email: v.optional(Settings.jit_trust_unverified_email),
  link_by_email: v.optional(Settings.link_by_email),
  trusted_for_2fa: v.optional(Settings.trusted_for_2fa),
  enabled: v.optional(Settings.enabled),
});

const UpdateBody = v.object(
  Object.fromEntries(Object.entries(Settings).map(([name, schema]) => [name, v.optional(schema)])) as {
    [K in keyof typeof Settings]: v.OptionalSchema<(typeof Settings)[K], undefined>;
  },
);

const ProviderSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  type: v.literal('oidc'),
  issuer: v.string(),
  client_id: v.string(),
  client_secret: v.literal('***'),
  token_endpoint_auth_method: v.picklist(TOKEN_AUTH_METHODS),
  scopes: v.array(v.string()),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  userinfo_endpoint: v.nullable(v.string()),
  jwks_uri: v.string(),
  id_token_signing_alg_values: v.array(v.string()),
  email_claim: v.string(),
  groups_claim: v.string(),
  jit_provisioning: v.boolean(),
  jit_tenant_id: v.nullable(v.string()),
  jit_trust_unverified_email: v.boolean(),
  link_by_email: v.boolean(),
  trusted_for_2fa: v.boolean(),
  enabled: v.boolean(),
  tenant_id: v.nullable(v.string()),
  redirect_uri: v.string(),
  sign_in_url: v.string(),
  linked_users: v.number(),
  created_by: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

const MappingSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  provider_id: v.string(),
  claim_value: v.string(),
  role: v.string(),
  tenant_id: v.nullable(v.string()),
  created_at: v.string(),
  updated_at: v.string(),
});

const ClaimValue = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(255));
const RoleName = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(63));
const MappingBody = v.object({ claim_value: ClaimValue, role: RoleName, tenant_id: v.optional(TenantId) });
const MappingUpdateBody = v.object({
  claim_value: v.optional(ClaimValue),
  role: v.optional(RoleName),
  tenant_id: v.optional(TenantId),
});
const MappingPath = v.object({ ...PathId.entries, mapping_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

const DiscoverBody = v.object({ url: Url });
const DiscoverSchema = v.object({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  userinfo_endpoint: v.nullable(v.string()),
  jwks_uri: v.string(),
  scopes_supported: v.array(v.string()),
  claims_supported: v.array(v.string()),
  id_token_signing_alg_values_supported: v.array(v.string()),
  token_endpoint_auth_methods_supported: v.array(v.string()),
  code_challenge_methods_supported: v.array(v.string()),
});
const TestSchema = v.object({
  provider_id: v.string(),
  success: v.boolean(),
  checks: v.array(
    v.object({ name: v.picklist(['discovery', 'jwks', 'token_endpoint']), passed: v.boolean(), message: v.string() }),
  ),
  tested_at: v.string(),
});

const notFound = { 404: { description: 'NOT_FOUND' } } as const;

export const list = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'list_identity_providers',
      summary: 'Identity providers (of the caller’s tenant; every tenant for a global caller), oldest first',
      tags: ['admin'],
      permission: 'identity_providers:read',
      query: PageQuery(50),
      responses: {
        200: {
          description: 'A page of providers',
          schema: v.object({ data: v.array(ProviderSchema), meta: MetaSchema }),
        },
      },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listProviders(deps(), caller, query) }),
  );

export const create = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'create_identity_provider',
      summary: 'Add an OpenID Connect identity provider; its client secret is stored encrypted and never shown',
      tags: ['admin'],
      permission: 'identity_providers:create',
      body: CreateBody,
      responses: {
        201: { description: 'The provider', schema: ProviderSchema },
        400: {
          description:
            'VALIDATION_ERROR (a URL that is not https or points inside the network, no openid scope; on issuer when its discovery document cannot be read now: does not resolve, refused, no answer in time, not JSON, not OIDC, another issuer)',
        },
        403: {
          description: 'FORBIDDEN: a tenant-scoped caller turning on jit_trust_unverified_email (global callers only)',
        },
        409: { description: 'CONFLICT: the name or the issuer is taken' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createProvider(deps(), caller, body) }),
  );

export const discover = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'discover_endpoints',
      summary: 'Read an issuer’s OpenID Connect discovery document (a guarded server-side request)',
      tags: ['admin'],
      permission: 'identity_providers:create',
      body: DiscoverBody,
      responses: {
        200: { description: 'The endpoints and what the provider supports', schema: DiscoverSchema },
        400: {
          description:
            'VALIDATION_ERROR: unreachable, not a discovery document, another issuer, or an internal address',
        },
      },
    },
    async ({ body }) => ({ statusCode: 200, body: await discoverEndpoints(deps(), body.url) }),
  );

export const get = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'get_identity_provider',
      summary: 'One identity provider (by id or short id); the secret answers as ***',
      tags: ['admin'],
      permission: 'identity_providers:read',
      params: PathId,
      responses: { 200: { description: 'The provider', schema: ProviderSchema }, ...notFound },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getProvider(deps(), caller, params.id) }),
  );

export const update = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'update_identity_provider',
      summary:
        'Change a provider (the fields given); client_secret omitted or *** keeps the stored one, except when the token endpoint or issuer changes',
      tags: ['admin'],
      permission: 'identity_providers:update',
      params: PathId,
      body: UpdateBody,
      responses: {
        200: { description: 'The provider', schema: ProviderSchema },
        400: {
          description:
            'VALIDATION_ERROR; on client_secret when token_endpoint or issuer changes without the secret given again; on issuer when a new issuer’s discovery document cannot be read',
        },
        403: {
          description:
            'INSUFFICIENT_PERMISSIONS: the provider maps to or is linked to more than the caller holds; FORBIDDEN: a tenant-scoped caller turning on jit_trust_unverified_email',
        },
        ...notFound,
        409: { description: 'CONFLICT: the name or issuer is taken, or the provider changed meanwhile' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateProvider(deps(), caller, params.id, body),
    }),
  );

export const remove = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'delete_identity_provider',
      summary: 'Delete a provider and its role mappings; refused while users are linked to it',
      tags: ['admin'],
      permission: 'identity_providers:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        ...notFound,
        409: { description: 'CONFLICT: users are linked to the provider (details.linked_users)' },
      },
    },
    async ({ caller, params }) => {
      await deleteProvider(deps(), caller, params.id);
      return { statusCode: 204, body: undefined };
    },
  );

export const test = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'test_connection',
      summary: 'Check the provider: discovery, JWKS, and a client-authenticated token request; 200 either way',
      tags: ['admin'],
      permission: 'identity_providers:update',
      params: PathId,
      responses: { 200: { description: 'What passed and what failed', schema: TestSchema }, ...notFound },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await testProvider(deps(), caller, params.id) }),
  );

export const mappings = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'list_role_mappings',
      summary: 'The provider’s role mappings (a bare array), oldest first',
      tags: ['admin'],
      permission: 'identity_providers:read',
      params: PathId,
      responses: { 200: { description: 'The mappings', schema: v.array(MappingSchema) }, ...notFound },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await listMappings(deps(), caller, params.id) }),
  );

export const createMappingEndpoint = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'create_role_mapping',
      summary: 'Map a value of the groups claim to a role (optionally only for users of one tenant)',
      tags: ['admin'],
      permission: 'identity_providers:update',
      params: PathId,
      body: MappingBody,
      responses: {
        201: { description: 'The mapping', schema: MappingSchema },
        400: {
          description: 'VALIDATION_ERROR: no such role or tenant; on a tenant’s provider, a tenant other than its own',
        },
        403: { description: 'INSUFFICIENT_PERMISSIONS: the role grants what the caller does not hold' },
        ...notFound,
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 201,
      body: await createMapping(deps(), caller, params.id, body),
    }),
  );

export const updateMappingEndpoint = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'update_role_mapping',
      summary: 'Change a role mapping (the fields given)',
      tags: ['admin'],
      permission: 'identity_providers:update',
      params: MappingPath,
      body: MappingUpdateBody,
      responses: {
        200: { description: 'The mapping', schema: MappingSchema },
        400: {
          description: 'VALIDATION_ERROR: no such role or tenant; on a tenant’s provider, a tenant other than its own',
        },
        403: { description: 'INSUFFICIENT_PERMISSIONS: the old or new role grants what the caller does not hold' },
        ...notFound,
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateMapping(deps(), caller, params.id, params.mapping_id, body),
    }),
  );

export const deleteMappingEndpoint = (deps: () => ProvidersDeps) =>
  http(
    {
      operationId: 'delete_role_mapping',
      summary: 'Delete a role mapping: its role goes from users at their next sign-in',
      tags: ['admin'],
      permission: 'identity_providers:update',
      params: MappingPath,
      responses: { 204: { description: 'Deleted' }, ...notFound },
    },
    async ({ caller, params }) => {
      await deleteMapping(deps(), caller, params.id, params.mapping_id);
      return { statusCode: 204, body: undefined };
    },
  );
