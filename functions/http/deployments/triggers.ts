// handlers -> domain/triggers/triggers.ts -> TriggerRepository: deploy triggers for their owner (decisions.md,
// "Deploy triggers"). deployments:read lists and reads; deployments:create creates, changes, deletes and re-keys.
// The list is a bare array (at most 100 per owner); the secret is shown only by create and rotate-secret.
import * as v from 'valibot';
import {
  createTrigger,
  deleteTrigger,
  getTrigger,
  listTriggers,
  rotateTriggerSecret,
  updateTrigger,
  type TriggersDeps,
} from '../../../domain/triggers/triggers.js';
import { http } from '../../shared/http.js';
import { PathId } from '../../shared/schemas.js';
import { triggersDeps } from '../../shared/triggers-wiring.js';
import { CreateDeploymentBody } from './schemas.js';

const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255));
const Path = v.pipe(v.string(), v.minLength(1), v.maxLength(500));
const Rules = v.object({
  variables: v.optional(v.pipe(v.record(v.pipe(v.string(), v.maxLength(128)), Path), v.maxEntries(50))),
  version_requirement: v.optional(v.nullable(Path)),
});
const Filters = v.pipe(
  v.array(
    v.object({
      field: Path,
      one_of: v.pipe(v.array(v.pipe(v.string(), v.maxLength(500))), v.minLength(1), v.maxLength(50)),
    }),
  ),
  v.maxLength(20),
);

const TriggerSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  owner_id: v.string(),
  tenant_id: v.nullable(v.string()),
  request: v.looseObject({}),
  rules: v.object({ variables: v.record(v.string(), v.string()), version_requirement: v.nullable(v.string()) }),
  filters: v.array(v.object({ field: v.string(), one_of: v.array(v.string()) })),
  enabled: v.boolean(),
  hook_url: v.string(),
  last_triggered_at: v.nullable(v.string()),
  created_at: v.string(),
  updated_at: v.string(),
});

const CreateBody = v.object({
  name: Name,
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000)))),
  request: CreateDeploymentBody,
  rules: v.optional(Rules),
  filters: v.optional(Filters),
  enabled: v.optional(v.boolean()),
});
const UpdateBody = v.partial(CreateBody);

export const list = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'list_triggers',
      summary: 'Your deploy triggers, oldest first (saved requests that a signed call starts)',
      tags: ['triggers'],
      permission: 'deployments:read',
      responses: { 200: { description: 'The caller’s triggers', schema: v.array(TriggerSchema) } },
    },
    async ({ caller }) => ({ statusCode: 200, body: await listTriggers(deps(), caller) }),
  );

export const create = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'create_trigger',
      summary: 'Create a deploy trigger; its signing secret (whsec_...) is shown only in this answer',
      tags: ['triggers'],
      permission: 'deployments:create',
      body: CreateBody,
      responses: {
        201: {
          description: 'The trigger, its hook_url and secret',
          schema: v.object({ ...TriggerSchema.entries, secret: v.string() }),
        },
        400: { description: 'VALIDATION_ERROR (the saved request as for POST /deployments; no freeze override)' },
        403: { description: 'FORBIDDEN: a user login is needed (not an API key or OAuth token)' },
        409: { description: 'CONFLICT: 100 triggers already' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createTrigger(deps(), caller, body) }),
  );

export const get = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'get_trigger',
      summary: 'One of your triggers (its saved variable values masked)',
      tags: ['triggers'],
      permission: 'deployments:read',
      params: PathId,
      responses: { 200: { description: 'The trigger', schema: TriggerSchema }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getTrigger(deps(), caller, params.id) }),
  );

export const update = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'update_trigger',
      summary: 'Change a trigger: name, description, the saved request (replaced whole), rules, filters, enabled',
      tags: ['triggers'],
      permission: 'deployments:create',
      params: PathId,
      body: UpdateBody,
      responses: {
        200: { description: 'The trigger', schema: TriggerSchema },
        400: { description: 'VALIDATION_ERROR' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateTrigger(deps(), caller, params.id, body),
    }),
  );

const toggle = (enabled: boolean) => (deps: () => TriggersDeps) =>
  http(
    {
      operationId: enabled ? 'enable_trigger' : 'disable_trigger',
      summary: enabled ? 'Enable a trigger' : 'Disable a trigger: its calls answer 403 until enabled again',
      tags: ['triggers'],
      permission: 'deployments:create',
      params: PathId,
      responses: { 200: { description: 'The trigger', schema: TriggerSchema }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => ({
      statusCode: 200,
      body: await updateTrigger(deps(), caller, params.id, { enabled }),
    }),
  );
export const enable = toggle(true);
export const disable = toggle(false);

export const remove = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'delete_trigger',
      summary: 'Delete a trigger: its calls answer 401 from now on',
      tags: ['triggers'],
      permission: 'deployments:create',
      params: PathId,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => {
      await deleteTrigger(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const rotate = (deps: () => TriggersDeps) =>
  http(
    {
      operationId: 'rotate_trigger_secret',
      summary: 'A new signing secret, shown once; the old one stops working at once',
      tags: ['triggers'],
      permission: 'deployments:create',
      params: PathId,
      responses: {
        200: { description: 'The new secret', schema: v.object({ id: v.string(), secret: v.string() }) },
        403: { description: 'FORBIDDEN: a user login is needed' },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await rotateTriggerSecret(deps(), caller, params.id) }),
  );

export const handlers = {
  list: list(triggersDeps),
  create: create(triggersDeps),
  get: get(triggersDeps),
  update: update(triggersDeps),
  enable: enable(triggersDeps),
  disable: disable(triggersDeps),
  remove: remove(triggersDeps),
  rotate: rotate(triggersDeps),
};
