// Lambda entry of the `targets` area (serverless.yml function `targets`).
import { areaRouter } from '../../shared/router.js';
import { targetsRoutes } from './routes.js';

export const handler = areaRouter(targetsRoutes);
