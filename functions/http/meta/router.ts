// Lambda entry of the `meta` area (serverless.yml function `meta`).
import { areaRouter } from '../../shared/router.js';
import { metaRoutes } from './routes.js';

export const handler = areaRouter(metaRoutes);
