// Lambda entry of the `tenancy` area (serverless.yml function `tenancy`).
import { areaRouter } from '../../shared/router.js';
import { tenancyRoutes } from './routes.js';

export const handler = areaRouter(tenancyRoutes);
