// Lambda entry of the `admin` area (serverless.yml function `admin`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { adminRoutes } from './routes.js';

export const handler = areaRouter(adminRoutes, { ...baseShell, ...userAuthentication });
