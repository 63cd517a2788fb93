// Lambda entry of the `meta` area (serverless.yml function `meta`).
import { areaRouter } from '../../shared/router.js';
import { baseShell } from '../../shared/wiring.js';
import { metaRoutes } from './routes.js';

export const handler = areaRouter(metaRoutes, baseShell);
