// handler -> receiveHook (domain/triggers/triggers.ts) -> TriggerRepository, WebhookVerifier, createDeployment
// POST /api/v1/hooks/{trigger_id}: no bearer token; the Standard Webhooks signature (or GitHub's
// X-Hub-Signature-256) over the raw body is the credential. Answers what POST /deployments answers, or 200
// `{triggered: false, reason}` when a filter does not match.
import * as v from 'valibot';
import { createAnswerBody } from '../../../domain/deployments/create.js';
import { receiveHook, type HookDeps } from '../../../domain/triggers/triggers.js';
import { http } from '../../shared/http.js';
import { PathId } from '../../shared/schemas.js';
import { hookDeps } from '../../shared/triggers-wiring.js';
import { DeploymentQueuedSchema, DeploymentStartedSchema } from './schemas.js';

export const makeHandler = (deps: () => HookDeps) =>
  http(
    {
      operationId: 'receive_hook',
      summary:
        'Start a deploy trigger: a JSON payload signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) or GitHub (X-Hub-Signature-256, X-GitHub-Delivery)',
      tags: ['triggers'],
      permission: 'public',
      params: PathId,
      responses: {
        200: {
          description: 'A filter did not match: nothing started',
          schema: v.object({ triggered: v.literal(false), reason: v.string() }),
        },
        201: { description: 'Started, as POST /deployments', schema: DeploymentStartedSchema },
        202: { description: 'Queued, as POST /deployments', schema: DeploymentQueuedSchema },
        400: { description: 'VALIDATION_ERROR: not JSON, a mapped value absent, or the request no longer valid' },
        401: { description: 'INVALID_CREDENTIALS: unknown trigger or wrong signature (the same answer)' },
        403: { description: 'FORBIDDEN: the trigger is disabled, or its owner inactive or without deployments:create' },
        409: {
          description:
            'CONFLICT: a replay (the same webhook-id; GitHub: the same signed body within 24 hours, whatever X-GitHub-Delivery says), or DEPLOYMENT_FROZEN',
        },
        429: { description: 'AUTH_RATE_LIMIT_EXCEEDED: too many wrong signatures for this trigger' },
      },
    },
    async ({ params, rawBody, headers }) => {
      const answer = await receiveHook(deps(), params.id, rawBody ?? '', headers);
      if (answer.kind === 'skipped') return { statusCode: 200, body: answer.body };
      const created = answer.answer;
      if (created.kind === 'dry_run') return { statusCode: 200, body: created.body };
      return {
        statusCode: created.kind === 'started' ? 201 : 202,
        body: createAnswerBody(created.outcome, { plan: false }),
      };
    },
  );

export const handler = makeHandler(hookDeps);
