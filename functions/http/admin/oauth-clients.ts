// handlers -> domain/oauth/clients.ts -> OAuthClientRepository: the six Admin: OAuth 2.0 clients endpoints (api.md;
// shapes in decisions.md section 9). Lists are bare arrays; DELETE deactivates; the secret is shown once.
import * as v from 'valibot';
import {
  createClient,
  deactivateClient,
  getClient,
  listClients,
  rotateClientSecret,
  updateClient,
  type OAuthClientsDeps,
} from '../../../domain/oauth/clients.js';
import { GRANT_TYPES } from '../../../domain/oauth/types.js';
import { http } from '../../shared/http.js';
import { PathId } from './schemas.js';

const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255));
const Description = v.pipe(v.string(), v.maxLength(1000));
const RedirectUris = v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(20));
const GrantTypes = v.pipe(
  v.array(v.picklist(GRANT_TYPES, `must be one of ${GRANT_TYPES.join(', ')}`)),
  v.minLength(1, 'name at least one grant type'),
  v.maxLength(3),
);
const Scopes = v.pipe(v.array(v.pipe(v.string(), v.maxLength(100))), v.maxLength(57));

const ClientSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  client_id: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  redirect_uris: v.array(v.string()),
  grant_types: v.array(v.picklist(GRANT_TYPES)),
  scopes: v.array(v.string()),
  is_confidential: v.boolean(),
  is_active: v.boolean(),
  tenant_id: v.nullable(v.string()),
  created_by: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

const CreateBody = v.object({
  name: Name,
  description: v.optional(Description),
  redirect_uris: v.optional(RedirectUris, []),
  grant_types: GrantTypes,
  scopes: Scopes,
  is_confidential: v.optional(v.boolean()),
});

const UpdateBody = v.object({
  name: v.optional(Name),
  description: v.optional(v.nullable(Description)),
  redirect_uris: v.optional(RedirectUris),
  grant_types: v.optional(GrantTypes),
  scopes: v.optional(Scopes),
});

export const list = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'list_clients',
      summary: 'OAuth 2.0 clients (of the caller’s tenant; every tenant for a global caller)',
      tags: ['admin'],
      permission: 'oauth_clients:read',
      responses: { 200: { description: 'The clients, oldest first', schema: v.array(ClientSchema) } },
    },
    async ({ caller }) => ({ statusCode: 200, body: await listClients(deps(), caller) }),
  );

export const create = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'create_client',
      summary: 'Create an OAuth 2.0 client; a confidential one’s secret is shown only in this answer',
      tags: ['admin'],
      permission: 'oauth_clients:create',
      body: CreateBody,
      responses: {
        201: {
          description: 'The client and its secret (null for a public client)',
          schema: v.object({ ...ClientSchema.entries, client_secret: v.nullable(v.string()) }),
        },
        400: { description: 'VALIDATION_ERROR' },
        403: { description: 'INSUFFICIENT_PERMISSIONS: a scope the caller does not hold' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createClient(deps(), caller, body) }),
  );

export const get = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'get_client',
      summary: 'One OAuth 2.0 client (by id or short id), without its secret',
      tags: ['admin'],
      permission: 'oauth_clients:read',
      params: PathId,
      responses: { 200: { description: 'The client', schema: ClientSchema }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getClient(deps(), caller, params.id) }),
  );

export const update = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'update_client',
      summary: 'Change name, description, redirect URIs, grant types or scopes',
      tags: ['admin'],
      permission: 'oauth_clients:update',
      params: PathId,
      body: UpdateBody,
      responses: {
        200: { description: 'The client', schema: ClientSchema },
        400: { description: 'VALIDATION_ERROR' },
        403: {
          description:
            "INSUFFICIENT_PERMISSIONS: a scope the caller does not hold; FORBIDDEN (client_creator_required): new redirect URIs, grant types or scopes by someone who does not act with every role of the client's creator",
        },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateClient(deps(), caller, params.id, body),
    }),
  );

export const deactivate = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'deactivate_client',
      summary: 'Deactivate a client (soft delete): no new authorizations or tokens; issued tokens stay valid',
      tags: ['admin'],
      permission: 'oauth_clients:delete',
      params: PathId,
      responses: { 204: { description: 'Deactivated' }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => {
      await deactivateClient(deps(), caller, params.id);
      return { statusCode: 204, body: undefined };
    },
  );

export const rotateSecret = (deps: () => OAuthClientsDeps) =>
  http(
    {
      operationId: 'rotate_oauth_client_secret',
      summary: 'A new secret, shown once; the old one stops working at once',
      tags: ['admin'],
      permission: 'oauth_clients:update',
      params: PathId,
      responses: {
        200: {
          description: 'The new secret',
          schema: v.object({ client_id: v.string(), client_secret: v.string() }),
        },
        400: { description: 'VALIDATION_ERROR: a public client has no secret' },
        403: {
          description:
            "INSUFFICIENT_PERMISSIONS: a scope the caller does not hold; FORBIDDEN (client_creator_required): the caller does not act with every role of the client's creator",
        },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await rotateClientSecret(deps(), caller, params.id) }),
  );
