// Lambda entry of the `catalog` area (serverless.yml function `catalog`).
import { areaRouter } from '../../shared/router.js';
import { catalogRoutes } from './routes.js';

export const handler = areaRouter(catalogRoutes);
