// Lambda entry of the `docs` area (serverless.yml function `docs`).
import { areaRouter } from '../../shared/router.js';
import { docsRoutes } from './routes.js';

export const handler = areaRouter(docsRoutes);
