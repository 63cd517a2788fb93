// handler -> refreshSseToken -> SseTokenRepository (no Authorization header: the session's refresh token)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { refreshSseToken } from '../../../domain/identity/sse-tokens.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { revokingIdentityDeps } from '../../shared/identity-wiring.js';
import { SseTokenSchema } from './schemas.js';

const Required = v.pipe(v.string(), v.minLength(1, 'is required'), v.maxLength(200));

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'refresh_sse_token',
      summary: 'The next SSE token of a session; the refresh token rotates',
      tags: ['auth'],
      permission: 'public',
      body: v.object({ session_id: Required, refresh_token: Required }),
      responses: {
        200: { description: 'A new token and refresh token', schema: SseTokenSchema },
        401: {
          description: 'INVALID_TOKEN: unknown or expired session, or a used refresh token',
          schema: ErrorEnvelopeSchema,
        },
        403: {
          description:
            'FORBIDDEN (user_credentials_required): a session an API key started; ask POST /auth/sse-token with the key again',
          schema: ErrorEnvelopeSchema,
        },
      },
    },
    async ({ body }) => ({
      statusCode: 200,
      body: await refreshSseToken(deps(), { sessionId: body.session_id, refreshToken: body.refresh_token }),
    }),
  );

export const handler = makeHandler(revokingIdentityDeps);
