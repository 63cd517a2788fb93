// Lambda entry of the `oauth` area (serverless.yml function `oauth`): the OAuth 2.0 surface outside /api/v1.
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { oauthRoutes } from './routes.js';

export const handler = areaRouter(oauthRoutes, baseShell);
