import { route, type Route } from '../../shared/router.js';
import * as agentChannelGet from './agent-channel-get.js';
import * as agentCommandCompletePost from './agent-command-complete-post.js';
import * as agentCommandOutputPost from './agent-command-output-post.js';
import * as agentCommandsGet from './agent-commands-get.js';
import * as agentHeartbeatPost from './agent-heartbeat-post.js';
import * as agentRegisterPost from './agent-register-post.js';
import * as enrollmentTokenDelete from './enrollment-token-delete.js';
import * as enrollmentTokensGet from './enrollment-tokens-get.js';
import * as enrollmentTokensPost from './enrollment-tokens-post.js';
import * as targetDelete from './target-delete.js';
import * as targetGet from './target-get.js';
import * as targetPut from './target-put.js';
import * as targetsGet from './targets-get.js';

export const targetsRoutes = [
  route('GET', '/api/v1/targets', targetsGet.handler),
  route('GET', '/api/v1/targets/enrollment-tokens', enrollmentTokensGet.handler),
  route('POST', '/api/v1/targets/enrollment-tokens', enrollmentTokensPost.handler),
  route('DELETE', '/api/v1/targets/enrollment-tokens/{id}', enrollmentTokenDelete.handler),
  route('GET', '/api/v1/targets/{id}', targetGet.handler),
  route('PUT', '/api/v1/targets/{id}', targetPut.handler),
  route('DELETE', '/api/v1/targets/{id}', targetDelete.handler),
  route('POST', '/api/v1/agent/register', agentRegisterPost.handler),
  route('POST', '/api/v1/agent/heartbeat', agentHeartbeatPost.handler),
  route('GET', '/api/v1/agent/channel', agentChannelGet.handler),
  route('GET', '/api/v1/agent/commands', agentCommandsGet.handler),
  route('POST', '/api/v1/agent/commands/{id}/output', agentCommandOutputPost.handler),
  route('POST', '/api/v1/agent/commands/{id}/complete', agentCommandCompletePost.handler),
] satisfies readonly Route[];
