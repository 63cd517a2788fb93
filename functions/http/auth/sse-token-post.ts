// handler -> issueSseToken -> SseTokenRepository (a single-use 60 s token for the event streams)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { issueSseToken } from '../../../domain/identity/sse-tokens.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { SseTokenSchema } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'create_sse_token',
      summary: 'A single-use token for the event streams (?sse_token=), with a session to renew it',
      tags: ['auth'],
      permission: 'authenticated',
      body: v.optional(v.object({}), {}),
      responses: { 200: { description: 'The token', schema: SseTokenSchema } },
    },
    async ({ caller }) => ({ statusCode: 200, body: await issueSseToken(deps(), caller) }),
  );

export const handler = makeHandler(identityDeps);
