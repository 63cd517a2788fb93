// Lambda entry of the `docs` area (serverless.yml function `docs`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { docsRoutes } from './routes.js';

export const handler = areaRouter(docsRoutes, baseShell);
