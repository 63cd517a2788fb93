import { route, type Route } from '../../shared/router.js';
import * as permissionsGet from './permissions-get.js';

export const adminRoutes: readonly Route[] = [route('GET', '/api/v1/admin/permissions', permissionsGet.handler)];
