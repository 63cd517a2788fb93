// Every HTTP route of the API, by area. Each area is one Lambda function in serverless.yml (its `router.ts`);
// this table joins them for the OpenAPI document and the route tests.
import type { Route } from '../shared/router.js';
import type { DocumentedRoute } from '../shared/openapi.js';
import { streamRoutes } from '../streams/routes.js';
import { adminRoutes } from './admin/routes.js';
import { authRoutes } from './auth/routes.js';
import { catalogRoutes } from './catalog/routes.js';
import { deploymentsRoutes } from './deployments/routes.js';
import { docsRoutes } from './docs/routes.js';
import { metaRoutes } from './meta/routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { targetsRoutes } from './targets/routes.js';
import { tenancyRoutes } from './tenancy/routes.js';

/** Area name (the serverless.yml function) -> its routes. */
export const areas: Readonly<Record<string, readonly Route[]>> = {
  meta: metaRoutes,
  docs: docsRoutes,
  auth: authRoutes,
  oauth: oauthRoutes,
  admin: adminRoutes,
  catalog: catalogRoutes,
  tenancy: tenancyRoutes,
  targets: targetsRoutes,
  deployments: deploymentsRoutes,
};

export const allRoutes = (): readonly Route[] => Object.values(areas).flat();

export const documentedRoutes = (): readonly DocumentedRoute[] => [
  ...allRoutes(),
  ...streamRoutes.map((r) => ({ ...r, streaming: true })),
];
