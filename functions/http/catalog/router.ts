// Lambda entry of the `catalog` area (serverless.yml function `catalog`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { idempotentShell } from '../../shared/idempotency-wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { catalogRoutes } from './routes.js';

export const handler = areaRouter(catalogRoutes, { ...baseShell, ...idempotentShell, ...userAuthentication });
