// Lambda entry of the `deployments` area (serverless.yml function `deployments`).
import { areaRouter } from '../../shared/router.js';
import { deploymentsRoutes } from './routes.js';

export const handler = areaRouter(deploymentsRoutes);
