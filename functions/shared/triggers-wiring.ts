// The composition root, triggers part: the repository, the signature verifier, and what the hook needs to act as
// the trigger's owner (users, roles, the create path, the shared limiter).
import type { HookDeps, TriggersDeps } from '../../domain/triggers/triggers.js';
import { DynamoTriggerRepository } from '../../infra/dynamodb/trigger-repository.js';
import { standardWebhooks } from '../../infra/webhooks/standard-webhooks.js';
import { createDeps } from './deployments-wiring.js';
import { identityDeps, secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { ids, infra, sharedBucket } from './wiring.js';

export const triggersDeps = once((): TriggersDeps => ({
  triggers: new DynamoTriggerRepository(infra().db, infra().config.TABLE_NAME),
  ids: ids(),
  clock: infra().clock,
  cipher: secretCipher(),
  verifier: standardWebhooks,
  baseUrl: infra().config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
}));

export const hookDeps = once((): HookDeps => ({
  ...triggersDeps(),
  users: identityDeps().users,
  roles: identityDeps().roles,
  limiter: sharedBucket,
  create: createDeps,
}));
