// Lambda entry of the `deployments` area (serverless.yml function `deployments`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { idempotentShell } from '../../shared/idempotency-wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { deploymentsRoutes } from './routes.js';

export const handler = areaRouter(deploymentsRoutes, { ...baseShell, ...idempotentShell, ...userAuthentication });
