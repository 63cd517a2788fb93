import { route, type Route } from '../../shared/router.js';
import * as authorizeGet from './authorize-get.js';
import * as consentPost from './consent-post.js';
import * as discoveryGet from './discovery-get.js';
import * as introspectPost from './introspect-post.js';
import * as jwksGet from './jwks-get.js';
import * as revokePost from './revoke-post.js';
import * as ssoGet from './sso-get.js';
import * as ssoReturnGet from './sso-return-get.js';
import * as tokenPost from './token-post.js';

export const oauthRoutes = [
  route('GET', '/.well-known/oauth-authorization-server', discoveryGet.handler),
  route('GET', '/oauth/jwks', jwksGet.handler),
  route('GET', '/oauth/authorize', authorizeGet.handler),
  route('POST', '/oauth/consent', consentPost.handler),
  route('GET', '/oauth/sso/{provider}', ssoGet.handler),
  route('GET', '/oauth/authorize/sso', ssoReturnGet.handler),
  route('POST', '/oauth/token', tokenPost.handler),
  route('POST', '/oauth/revoke', revokePost.handler),
  route('POST', '/oauth/introspect', introspectPost.handler),
] satisfies readonly Route[];
