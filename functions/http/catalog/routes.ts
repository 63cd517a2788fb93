import type { Route } from '../../shared/router.js';

export const catalogRoutes: readonly Route[] = [];
