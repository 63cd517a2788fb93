import type { Route } from '../../shared/router.js';

export const tenancyRoutes: readonly Route[] = [];
