import { route, type Route } from '../../shared/router.js';
import * as apiKeysDelete from './api-keys-delete.js';
import * as apiKeysGet from './api-keys-get.js';
import * as apiKeysPost from './api-keys-post.js';
import * as loginPost from './login-post.js';
import * as logoutPost from './logout-post.js';
import * as meGet from './me-get.js';
import * as passwordPost from './password-post.js';
import * as refreshPost from './refresh-post.js';
import * as sessionDelete from './session-delete.js';
import * as ssoCallbackGet from './sso-callback-get.js';
import * as ssoGet from './sso-get.js';
import * as ssoProvidersGet from './sso-providers-get.js';
import * as sseTokenPost from './sse-token-post.js';
import * as sseTokenRefreshPost from './sse-token-refresh-post.js';
import * as twoFactorDisablePost from './two-factor-disable-post.js';
import * as twoFactorEnablePost from './two-factor-enable-post.js';
import * as twoFactorRecoveryCodesPost from './two-factor-recovery-codes-post.js';
import * as twoFactorSetupPost from './two-factor-setup-post.js';
import * as twoFactorVerifyPost from './two-factor-verify-post.js';

export const authRoutes = [
  route('POST', '/api/v1/auth/login', loginPost.handler),
  route('POST', '/api/v1/auth/refresh', refreshPost.handler),
  route('POST', '/api/v1/auth/logout', logoutPost.handler),
  route('DELETE', '/api/v1/auth/session', sessionDelete.handler),
  route('GET', '/api/v1/auth/me', meGet.handler),
  route('POST', '/api/v1/auth/password', passwordPost.handler),
  route('POST', '/api/v1/auth/api-keys', apiKeysPost.handler),
  route('GET', '/api/v1/auth/api-keys', apiKeysGet.handler),
  route('DELETE', '/api/v1/auth/api-keys/{id}', apiKeysDelete.handler),
  route('POST', '/api/v1/auth/sse-token', sseTokenPost.handler),
  route('POST', '/api/v1/auth/sse-token/refresh', sseTokenRefreshPost.handler),
  route('POST', '/api/v1/auth/2fa/setup', twoFactorSetupPost.handler),
  route('POST', '/api/v1/auth/2fa/enable', twoFactorEnablePost.handler),
  route('POST', '/api/v1/auth/2fa/disable', twoFactorDisablePost.handler),
  route('POST', '/api/v1/auth/2fa/verify', twoFactorVerifyPost.handler),
  route('POST', '/api/v1/auth/2fa/recovery-codes', twoFactorRecoveryCodesPost.handler),
  route('GET', '/api/v1/auth/sso', ssoProvidersGet.handler),
  route('GET', '/api/v1/auth/sso/{provider}', ssoGet.handler),
  route('GET', '/api/v1/auth/sso/{provider}/callback', ssoCallbackGet.handler),
] satisfies readonly Route[];
