// Lambda entry of the `meta` area (serverless.yml function `meta`).
import '../../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { metaRoutes } from './routes.js';

export const handler = areaRouter(metaRoutes, baseShell);
