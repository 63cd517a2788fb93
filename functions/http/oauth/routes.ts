import { route, type Route } from '../../shared/router.js';
import * as jwksGet from './jwks-get.js';

export const oauthRoutes = [route('GET', '/oauth/jwks', jwksGet.handler)] satisfies readonly Route[];
