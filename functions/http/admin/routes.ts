import { route, type Route } from '../../shared/router.js';
import { analysisDeps } from '../../shared/analysis-wiring.js';
import { oauthClientsDeps } from '../../shared/oauth-wiring.js';
import { providersDeps } from '../../shared/sso-wiring.js';
import * as analysis from './analysis-endpoints.js';
import * as idp from './identity-providers.js';
import * as encryptionStatsGet from './encryption-stats-get.js';
import * as encryptionVerifyPost from './encryption-verify-post.js';
import * as oauthClients from './oauth-clients.js';
import * as orchestrationGet from './orchestration-get.js';
import * as orchestrationPut from './orchestration-put.js';
import * as permissionsGet from './permissions-get.js';
import * as roleDelete from './role-delete.js';
import * as roleGet from './role-get.js';
import * as rolePermissionsGet from './role-permissions-get.js';
import * as rolePermissionsPost from './role-permissions-post.js';
import * as rolePermissionsRemovePost from './role-permissions-remove-post.js';
import * as rolePut from './role-put.js';
import * as roleUsersGet from './role-users-get.js';
import * as rolesGet from './roles-get.js';
import * as rolesPost from './roles-post.js';
import * as userDelete from './user-delete.js';
import * as userGet from './user-get.js';
import * as userPatch from './user-patch.js';
import * as usersGet from './users-get.js';
import * as usersPost from './users-post.js';

export const adminRoutes = [
  route('GET', '/api/v1/admin/analysis/requests', analysis.listRequests(analysisDeps)),
  route('POST', '/api/v1/admin/analysis/requests/{id}/retry', analysis.retryRequest(analysisDeps)),
  route('GET', '/api/v1/admin/analysis/settings', analysis.getSettings(analysisDeps)),
  route('PUT', '/api/v1/admin/analysis/settings', analysis.putSettings(analysisDeps)),
  route('GET', '/api/v1/admin/analysis/settings/defaults', analysis.getDefaults(analysisDeps)),
  route('POST', '/api/v1/admin/analysis/settings/restore', analysis.restore(analysisDeps)),
  route('GET', '/api/v1/admin/analysis/status', analysis.status(analysisDeps)),
  route('POST', '/api/v1/admin/analysis/test', analysis.test(analysisDeps)),
  route('GET', '/api/v1/admin/identity-providers', idp.list(providersDeps)),
  route('POST', '/api/v1/admin/identity-providers', idp.create(providersDeps)),
  route('POST', '/api/v1/admin/identity-providers/discover', idp.discover(providersDeps)),
  route('GET', '/api/v1/admin/identity-providers/{id}', idp.get(providersDeps)),
  route('PUT', '/api/v1/admin/identity-providers/{id}', idp.update(providersDeps)),
  route('DELETE', '/api/v1/admin/identity-providers/{id}', idp.remove(providersDeps)),
  route('GET', '/api/v1/admin/identity-providers/{id}/role-mappings', idp.mappings(providersDeps)),
  route('POST', '/api/v1/admin/identity-providers/{id}/role-mappings', idp.createMappingEndpoint(providersDeps)),
  route(
    'PUT',
    '/api/v1/admin/identity-providers/{id}/role-mappings/{mapping_id}',
    idp.updateMappingEndpoint(providersDeps),
  ),
  route(
    'DELETE',
    '/api/v1/admin/identity-providers/{id}/role-mappings/{mapping_id}',
    idp.deleteMappingEndpoint(providersDeps),
  ),
  route('POST', '/api/v1/admin/identity-providers/{id}/test', idp.test(providersDeps)),
  route('GET', '/api/v1/admin/encryption/stats', encryptionStatsGet.handler),
  route('POST', '/api/v1/admin/encryption/verify', encryptionVerifyPost.handler),
  route('GET', '/api/v1/admin/oauth-clients', oauthClients.list(oauthClientsDeps)),
  route('POST', '/api/v1/admin/oauth-clients', oauthClients.create(oauthClientsDeps)),
  route('GET', '/api/v1/admin/oauth-clients/{id}', oauthClients.get(oauthClientsDeps)),
  route('PATCH', '/api/v1/admin/oauth-clients/{id}', oauthClients.update(oauthClientsDeps)),
  route('DELETE', '/api/v1/admin/oauth-clients/{id}', oauthClients.deactivate(oauthClientsDeps)),
  route('POST', '/api/v1/admin/oauth-clients/{id}/rotate-secret', oauthClients.rotateSecret(oauthClientsDeps)),
  route('GET', '/api/v1/admin/orchestration', orchestrationGet.handler),
  route('PUT', '/api/v1/admin/orchestration', orchestrationPut.handler),
  route('GET', '/api/v1/admin/permissions', permissionsGet.handler),
  route('GET', '/api/v1/admin/roles', rolesGet.handler),
  route('POST', '/api/v1/admin/roles', rolesPost.handler),
  route('GET', '/api/v1/admin/roles/{id}', roleGet.handler),
  route('PUT', '/api/v1/admin/roles/{id}', rolePut.handler),
  route('DELETE', '/api/v1/admin/roles/{id}', roleDelete.handler),
  route('GET', '/api/v1/admin/roles/{id}/permissions', rolePermissionsGet.handler),
  route('POST', '/api/v1/admin/roles/{id}/permissions', rolePermissionsPost.handler),
  route('POST', '/api/v1/admin/roles/{id}/permissions/remove', rolePermissionsRemovePost.handler),
  route('GET', '/api/v1/admin/roles/{id}/users', roleUsersGet.handler),
  route('GET', '/api/v1/admin/users', usersGet.handler),
  route('POST', '/api/v1/admin/users', usersPost.handler),
  route('GET', '/api/v1/admin/users/{id}', userGet.handler),
  route('PATCH', '/api/v1/admin/users/{id}', userPatch.handler),
  route('DELETE', '/api/v1/admin/users/{id}', userDelete.handler),
] satisfies readonly Route[];
