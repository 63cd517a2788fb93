// Lambda entry of the `auth` area (serverless.yml function `auth`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { authRoutes } from './routes.js';

export const handler = areaRouter(authRoutes, { ...baseShell, ...userAuthentication });
