// handler -> createEnrollmentToken (domain/targets/enrollment.ts) -> EnrollmentTokenRepository, lookups
import * as v from 'valibot';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { createEnrollmentToken } from '../../../domain/targets/enrollment.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { EnrollmentTokenSchema, Tags } from './schemas.js';

const Ref = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const Body = v.object({
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(255, 'must be at most 255 characters')))),
  tenant_id: v.optional(v.nullable(Ref)),
  environment_id: v.optional(v.nullable(Ref)),
  expires_in_hours: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be an integer'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(720, 'must be at most 720 (30 days)'),
    ),
  ),
  tags: v.optional(Tags),
  max_uses: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be an integer'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(1000, 'must be at most 1000'),
    ),
  ),
});

const TokenSchema = v.object({ ...EnrollmentTokenSchema.entries, token: v.string() });

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'create_enrollment_token',
      summary:
        'An enrollment token for agents (shown once): it fixes the tenant, environment and tags of the targets it enrolls; max_uses registrations (default 1) until it expires (default 24 h)',
      tags: ['targets'],
      permission: 'targets:create',
      body: Body,
      responses: { 201: { description: 'The token, shown once', schema: TokenSchema } },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createEnrollmentToken(deps(), caller, body) }),
  );

export const handler = makeHandler(targetsDeps);
