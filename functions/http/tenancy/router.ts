// Lambda entry of the `tenancy` area (serverless.yml function `tenancy`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { tenancyRoutes } from './routes.js';

export const handler = areaRouter(tenancyRoutes, { ...baseShell, ...userAuthentication });
