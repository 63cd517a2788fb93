// handler -> deleteUser (domain/identity/users-admin.ts) -> UserDirectory, ApiKeyRepository
import { deleteUser, type UsersDeps } from '../../../domain/identity/users-admin.js';
import { http } from '../../shared/http.js';
import { revokingUsersDeps } from '../../shared/identity-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => UsersDeps) =>
  http(
    {
      operationId: 'delete_user',
      summary: 'Delete a user; their sessions and API keys stop working',
      tags: ['admin'],
      permission: 'users:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: your own account' },
      },
    },
    async ({ caller, params }) => {
      await deleteUser(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(revokingUsersDeps);
