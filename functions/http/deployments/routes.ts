import { route, type Route } from '../../shared/router.js';
import * as analysisGet from './analysis-get.js';
import * as deploymentCancelPost from './deployment-cancel-post.js';
import * as deploymentGet from './deployment-get.js';
import * as deploymentRedeployPost from './deployment-redeploy-post.js';
import * as deploymentsGet from './deployments-get.js';
import * as deploymentsPost from './deployments-post.js';
import * as deploymentsPreviewPost from './deployments-preview-post.js';
import * as hookPost from './hook-post.js';
import * as logsHistoryGet from './logs-history-get.js';
import * as pendingDelete from './pending-delete.js';
import * as pendingGet from './pending-get.js';
import { handlers as triggers } from './triggers.js';

export const deploymentsRoutes = [
  route('GET', '/api/v1/deployments', deploymentsGet.handler),
  route('POST', '/api/v1/deployments', deploymentsPost.handler),
  route('POST', '/api/v1/deployments/preview', deploymentsPreviewPost.handler),
  route('GET', '/api/v1/deployments/pending', pendingGet.handler),
  route('DELETE', '/api/v1/deployments/pending/{id}', pendingDelete.handler),
  route('GET', '/api/v1/deployments/{id}', deploymentGet.handler),
  route('POST', '/api/v1/deployments/{id}/cancel', deploymentCancelPost.handler),
  route('POST', '/api/v1/deployments/{id}/redeploy', deploymentRedeployPost.handler),
  route('GET', '/api/v1/deployments/{id}/analysis', analysisGet.handler),
  route('GET', '/api/v1/deployments/{id}/logs/history', logsHistoryGet.handler),
  route('GET', '/api/v1/triggers', triggers.list),
  route('POST', '/api/v1/triggers', triggers.create),
  route('GET', '/api/v1/triggers/{id}', triggers.get),
  route('PATCH', '/api/v1/triggers/{id}', triggers.update),
  route('DELETE', '/api/v1/triggers/{id}', triggers.remove),
  route('POST', '/api/v1/triggers/{id}/enable', triggers.enable),
  route('POST', '/api/v1/triggers/{id}/disable', triggers.disable),
  route('POST', '/api/v1/triggers/{id}/rotate-secret', triggers.rotate),
  route('POST', '/api/v1/hooks/{id}', hookPost.handler),
] satisfies readonly Route[];
