// Lambda entry of the `targets` area (serverless.yml function `targets`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { agentAuthentication } from '../../shared/targets-wiring.js';
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { userAuthentication } from '../../shared/identity-wiring.js';
import { targetsRoutes } from './routes.js';

export const handler = areaRouter(targetsRoutes, { ...baseShell, ...userAuthentication, ...agentAuthentication });
