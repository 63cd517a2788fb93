import type { Route } from '../../shared/router.js';

export const targetsRoutes: readonly Route[] = [];
