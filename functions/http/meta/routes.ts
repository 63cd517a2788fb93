import { route, type Route } from '../../shared/router.js';
import * as healthGet from './health-get.js';
import * as healthReadyGet from './health-ready-get.js';
import * as serverInfoGet from './server-info-get.js';

export const metaRoutes = [
  route('GET', '/api/v1/health', healthGet.handler),
  route('GET', '/api/v1/health/ready', healthReadyGet.handler),
  route('GET', '/api/v1/server/info', serverInfoGet.handler),
] satisfies readonly Route[];
