import { route, type Route } from '../../shared/router.js';
import * as docsGet from './docs-get.js';
import * as openapiGet from './openapi-get.js';

export const docsRoutes = [
  route('GET', '/api/v1/openapi.json', openapiGet.handler),
  route('GET', '/api/v1/docs', docsGet.handler),
] satisfies readonly Route[];
