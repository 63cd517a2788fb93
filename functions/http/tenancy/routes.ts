import { route, type Route } from '../../shared/router.js';
import * as freezeDelete from './deployment-freeze-delete.js';
import * as freezeGet from './deployment-freeze-get.js';
import * as freezePut from './deployment-freeze-put.js';
import * as freezesGet from './deployment-freezes-get.js';
import * as freezesPost from './deployment-freezes-post.js';
import * as environmentDelete from './environment-delete.js';
import * as environmentGet from './environment-get.js';
import * as environmentPut from './environment-put.js';
import * as environmentsGet from './environments-get.js';
import * as environmentsPost from './environments-post.js';
import * as tenantDelete from './tenant-delete.js';
import * as tenantGet from './tenant-get.js';
import * as tenantPut from './tenant-put.js';
import * as tenantsGet from './tenants-get.js';
import * as tenantsPost from './tenants-post.js';
import { handlers as webhooks } from './webhooks.js';

export const tenancyRoutes = [
  route('GET', '/api/v1/tenants', tenantsGet.handler),
  route('POST', '/api/v1/tenants', tenantsPost.handler),
  route('GET', '/api/v1/tenants/{id}', tenantGet.handler),
  route('PUT', '/api/v1/tenants/{id}', tenantPut.handler),
  route('DELETE', '/api/v1/tenants/{id}', tenantDelete.handler),
  route('GET', '/api/v1/environments', environmentsGet.handler),
  route('POST', '/api/v1/environments', environmentsPost.handler),
  route('GET', '/api/v1/environments/{id}', environmentGet.handler),
  route('PUT', '/api/v1/environments/{id}', environmentPut.handler),
  route('DELETE', '/api/v1/environments/{id}', environmentDelete.handler),
  route('GET', '/api/v1/deployment-freezes', freezesGet.handler),
  route('POST', '/api/v1/deployment-freezes', freezesPost.handler),
  route('GET', '/api/v1/deployment-freezes/{id}', freezeGet.handler),
  route('PUT', '/api/v1/deployment-freezes/{id}', freezePut.handler),
  route('DELETE', '/api/v1/deployment-freezes/{id}', freezeDelete.handler),
  route('GET', '/api/v1/webhooks', webhooks.list),
  route('POST', '/api/v1/webhooks', webhooks.create),
  route('GET', '/api/v1/webhooks/{id}', webhooks.get),
  route('PATCH', '/api/v1/webhooks/{id}', webhooks.update),
  route('DELETE', '/api/v1/webhooks/{id}', webhooks.remove),
  route('POST', '/api/v1/webhooks/{id}/rotate-secret', webhooks.rotate),
  route('POST', '/api/v1/webhooks/{id}/test', webhooks.test),
  route('GET', '/api/v1/webhooks/{id}/deliveries', webhooks.deliveries),
  route('POST', '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', webhooks.redeliver),
] satisfies readonly Route[];
