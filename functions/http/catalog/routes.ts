// The catalog area (serverless.yml function `catalog`): actions and their versions, sequences, solutions.
import { route, type Route } from '../../shared/router.js';
import * as actionDelete from './action-delete.js';
import * as actionGet from './action-get.js';
import * as actionPut from './action-put.js';
import * as actionVersionDelete from './action-version-delete.js';
import * as actionVersionGet from './action-version-get.js';
import * as actionVersionPut from './action-version-put.js';
import * as actionVersionsGet from './action-versions-get.js';
import * as actionVersionsPost from './action-versions-post.js';
import * as actionsGet from './actions-get.js';
import * as actionsPost from './actions-post.js';
import * as sequenceDelete from './sequence-delete.js';
import * as sequenceGet from './sequence-get.js';
import * as sequencePut from './sequence-put.js';
import * as sequencesGet from './sequences-get.js';
import * as sequencesPost from './sequences-post.js';
import * as solutionDelete from './solution-delete.js';
import * as solutionGet from './solution-get.js';
import * as solutionPut from './solution-put.js';
import * as solutionsGet from './solutions-get.js';
import * as solutionsPost from './solutions-post.js';

export const catalogRoutes = [
  route('GET', '/api/v1/actions', actionsGet.handler),
  route('POST', '/api/v1/actions', actionsPost.handler),
  route('GET', '/api/v1/actions/{id}', actionGet.handler),
  route('PUT', '/api/v1/actions/{id}', actionPut.handler),
  route('DELETE', '/api/v1/actions/{id}', actionDelete.handler),
  route('GET', '/api/v1/actions/{id}/versions', actionVersionsGet.handler),
  route('POST', '/api/v1/actions/{id}/versions', actionVersionsPost.handler),
  route('GET', '/api/v1/actions/{id}/versions/{version}', actionVersionGet.handler),
  route('PUT', '/api/v1/actions/{id}/versions/{version}', actionVersionPut.handler),
  route('DELETE', '/api/v1/actions/{id}/versions/{version}', actionVersionDelete.handler),
  route('GET', '/api/v1/sequences', sequencesGet.handler),
  route('POST', '/api/v1/sequences', sequencesPost.handler),
  route('GET', '/api/v1/sequences/{id}', sequenceGet.handler),
  route('PUT', '/api/v1/sequences/{id}', sequencePut.handler),
  route('DELETE', '/api/v1/sequences/{id}', sequenceDelete.handler),
  route('GET', '/api/v1/solutions', solutionsGet.handler),
  route('POST', '/api/v1/solutions', solutionsPost.handler),
  route('GET', '/api/v1/solutions/{id}', solutionGet.handler),
  route('PUT', '/api/v1/solutions/{id}', solutionPut.handler),
  route('DELETE', '/api/v1/solutions/{id}', solutionDelete.handler),
] satisfies readonly Route[];
