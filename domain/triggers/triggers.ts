// Deploy triggers: CRUD for their owner, and the signed call that starts one (POST /api/v1/hooks/{id}).
// A trigger is a credential (its secret starts deployments), so, like an API key, it is made and re-keyed only with
// a user's own login; it is seen only by its owner (others: 404); at each call it acts with the owner's current
// permissions and tenant and goes through the normal create path (validation, freezes, queueing). Permissions
// (the spec's 57 stay 57): deployments:read to list and read, deployments:create for everything else and to fire.
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { createDeployment, type CreateAnswer, type CreateDeps } from '../deployments/create.js';
import {
  AuthRateLimitError,
  ForbiddenError,
  InsufficientPermissionsError,
  InvalidCredentialsError,
} from '../identity/errors.js';
import type { RateLimiter, RatePolicy, RoleDirectory, SecretCipher, UserRepository } from '../identity/ports.js';
import { callerOfCredential, requireUserSession } from '../identity/delegation.js';
import type { Permission } from '../identity/permissions.js';
import type { Caller } from '../identity/types.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { TriggerRepository, WebhookVerifier } from './ports.js';
import type { SavedRequest, Trigger, TriggerFilter, TriggerRules } from './types.js';

export interface TriggersDeps {
  readonly triggers: TriggerRepository;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly cipher: SecretCipher;
  readonly verifier: WebhookVerifier;
  /** The public base URL: a trigger's view shows the URL to call. */
  readonly baseUrl: string;
}

export interface HookDeps extends TriggersDeps {
  readonly users: Pick<UserRepository, 'get'>;
  readonly roles: RoleDirectory;
  readonly limiter: RateLimiter;
  readonly create: () => CreateDeps;
}

/** Wrong signatures per trigger: bursts of 10, then one a minute (answered 429 AUTH_RATE_LIMIT_EXCEEDED). */
export const BAD_SIGNATURES_PER_TRIGGER: RatePolicy = { ratePerSecond: 1 / 60, burst: 10 };
/**
 * Replay keys are kept this long: past the 5-minute timestamp tolerance, and a day for GitHub's untimed calls (keyed
 * on the body's digest: the same signed body is refused for a day, and replays again after it; README, triggers).
 */
export const DELIVERY_MEMORY_SECONDS = 86_400;
export const MAX_TRIGGERS_PER_OWNER = 100;
/** What a trigger's call may do for its owner: create its saved deployment (and read what it resolves). */
export const TRIGGER_SCOPES: readonly Permission[] = ['deployments:create', 'deployments:read'];
const MASK = '***';

export interface TriggerCommand {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly request: SavedRequest & {
    readonly override_freeze?: boolean | undefined;
    readonly dry_run?: boolean | undefined;
  };
  readonly rules?:
    { readonly variables?: Readonly<Record<string, string>>; readonly version_requirement?: string | null } | undefined;
  readonly filters?: readonly { readonly field: string; readonly one_of: readonly string[] }[] | undefined;
  readonly enabled?: boolean | undefined;
}

const contextOf = (id: string) => `trigger:${id}`;

interface StoredRequest extends Omit<SavedRequest, 'variables' | 'prompted_values'> {
  /** The variables and prompted values, sealed together. */
  readonly sealed_values?: string;
  /** Their names (not secret), so that a view shows them masked without decrypting anything. */
  readonly value_names?: { readonly variables?: readonly string[]; readonly prompted_values?: readonly string[] };
}

const masked = (names: readonly string[] | undefined) =>
  names === undefined ? undefined : Object.fromEntries(names.map((k) => [k, MASK]));

/** What the owner sees: the saved request with its values masked (they may be secrets), and the URL to call. */
export const triggerView = (deps: Pick<TriggersDeps, 'baseUrl'>, t: Trigger) => {
  const { sealed_values: _sealed, value_names: names, ...request } = t.request as StoredRequest;
  const values = { variables: masked(names?.variables), prompted_values: masked(names?.prompted_values) };
  return {
    id: t.id,
    short_id: t.shortId,
    name: t.name,
    description: t.description,
    owner_id: t.ownerId,
    tenant_id: t.tenantId,
    request: {
      ...request,
      ...(values.variables === undefined ? {} : { variables: values.variables }),
      ...(values.prompted_values === undefined ? {} : { prompted_values: values.prompted_values }),
    },
    rules: { variables: { ...t.rules.variables }, version_requirement: t.rules.versionRequirement },
    filters: t.filters.map((f) => ({ field: f.field, one_of: [...f.oneOf] })),
    enabled: t.enabled,
    hook_url: `${deps.baseUrl}/api/v1/hooks/${t.id}`,
    last_triggered_at: t.lastTriggeredAt,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
};

const openValues = (
  cipher: SecretCipher,
  id: string,
  sealed: string | undefined,
): Pick<SavedRequest, 'variables' | 'prompted_values'> =>
  sealed === undefined
    ? {}
    : (JSON.parse(cipher.decrypt(sealed, contextOf(id))) as Pick<SavedRequest, 'variables' | 'prompted_values'>);

const PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){0,15}$/;

const checkPaths = (rules: TriggerRules, filters: readonly TriggerFilter[]) => {
  const bad = [
    ...Object.entries(rules.variables).map(([name, path]) => ({ field: `rules.variables.${name}`, path })),
    ...(rules.versionRequirement === null
      ? []
      : [{ field: 'rules.version_requirement', path: rules.versionRequirement }]),
    ...filters.map((f, i) => ({ field: `filters.${i}.field`, path: f.field })),
  ].filter(({ path }) => !PATH.test(path));
  if (bad.length > 0)
    throw new ValidationError(
      'A payload path is dot-separated names or array indexes (for example release.tag_name or commits.0.id).',
      bad.map(({ field }) => ({ field, code: 'VALIDATION_ERROR', message: 'is not a payload path' })),
    );
};

/** The request as stored: a freeze override or dry run refused; variables and prompted values sealed. */
const storedRequest = (cipher: SecretCipher, id: string, request: TriggerCommand['request']): StoredRequest => {
  if (request.override_freeze === true)
    throw ValidationError.field('request.override_freeze', 'a trigger cannot override a freeze: it acts unattended');
  if (request.dry_run === true) throw ValidationError.field('request.dry_run', 'a trigger always deploys');
  const {
    variables,
    prompted_values: prompted,
    override_freeze: _o,
    override_reason: _r,
    dry_run: _d,
    ...rest
  } = request as TriggerCommand['request'] & { override_reason?: unknown };
  const values = {
    ...(variables === undefined ? {} : { variables }),
    ...(prompted === undefined ? {} : { prompted_values: prompted }),
  };
  if (Object.keys(values).length === 0) return rest;
  return {
    ...rest,
    sealed_values: cipher.encrypt(JSON.stringify(values), contextOf(id)),
    value_names: {
      ...(variables === undefined ? {} : { variables: Object.keys(variables) }),
      ...(prompted === undefined ? {} : { prompted_values: Object.keys(prompted) }),
    },
  };
};

/**
 * A request sent back as read: a value that is the mask (`***`) under a name the saved request holds keeps the saved
 * value, so an edit of other fields never overwrites a secret with its mask; a new value replaces it, and a name
 * left out is dropped. The mask under a name that has no saved value is refused (there is nothing to keep).
 */
const unmasked = (
  cipher: SecretCipher,
  trigger: Trigger,
  request: TriggerCommand['request'],
): TriggerCommand['request'] => {
  const keys = ['variables', 'prompted_values'] as const;
  if (!keys.some((k) => Object.values(request[k] ?? {}).includes(MASK))) return request;
  const saved = openValues(cipher, trigger.id, (trigger.request as StoredRequest).sealed_values);
  const merged = (key: (typeof keys)[number]) => {
    const given = request[key];
    if (given === undefined) return {};
    const values = Object.fromEntries(
      Object.entries(given).map(([name, value]) => {
        if (value !== MASK) return [name, value];
        const kept = saved[key]?.[name];
        if (kept === undefined)
          throw ValidationError.field(
            `request.${key}.${name}`,
            `${MASK} is the mask of a saved value, and this trigger has no saved value of ${name}: type the value`,
          );
        return [name, kept];
      }),
    );
    return { [key]: values };
  };
  return { ...request, ...merged('variables'), ...merged('prompted_values') };
};

const rulesOf = (command: TriggerCommand['rules']): TriggerRules => ({
  variables: { ...(command?.variables ?? {}) },
  versionRequirement: command?.version_requirement ?? null,
});

const filtersOf = (command: TriggerCommand['filters']): TriggerFilter[] =>
  (command ?? []).map((f) => ({ field: f.field, oneOf: [...f.one_of] }));

const own = async (deps: Pick<TriggersDeps, 'triggers'>, caller: Caller, id: string): Promise<Trigger> => {
  const trigger = await deps.triggers.get(id);
  if (trigger === undefined || trigger.ownerId !== caller.userId) throw new NotFoundError('Trigger', id);
  return trigger;
};

export const createTrigger = async (deps: TriggersDeps, caller: Caller, command: TriggerCommand) => {
  requireUserSession(caller, 'Creating a trigger (its secret is a credential)');
  if ((await deps.triggers.listByOwner(caller.userId)).length >= MAX_TRIGGERS_PER_OWNER)
    throw new ConflictError(`At most ${MAX_TRIGGERS_PER_OWNER} triggers per user: delete one first.`);
  const { id, shortId } = await deps.ids.next('trigger');
  const rules = rulesOf(command.rules);
  const filters = filtersOf(command.filters);
  checkPaths(rules, filters);
  const secret = deps.verifier.newSecret();
  const now = deps.clock.now().toISOString();
  const trigger: Trigger = {
    id,
    shortId,
    name: command.name,
    description: command.description ?? null,
    ownerId: caller.userId,
    tenantId: caller.tenantId,
    request: storedRequest(deps.cipher, id, command.request),
    rules,
    filters,
    enabled: command.enabled ?? true,
    sealedSecret: deps.cipher.encrypt(secret, contextOf(id)),
    lastTriggeredAt: null,
    createdAt: now,
    updatedAt: now,
    revision: 1,
  };
  await deps.triggers.create(trigger);
  return { ...triggerView(deps, trigger), secret };
};

export const listTriggers = async (deps: Pick<TriggersDeps, 'triggers' | 'baseUrl'>, caller: Caller) =>
  (await deps.triggers.listByOwner(caller.userId)).map((t) => triggerView(deps, t));

export const getTrigger = async (deps: Pick<TriggersDeps, 'triggers' | 'baseUrl'>, caller: Caller, id: string) =>
  triggerView(deps, await own(deps, caller, id));

export const updateTrigger = async (
  deps: TriggersDeps,
  caller: Caller,
  id: string,
  command: Partial<TriggerCommand>,
) => {
  const trigger = await own(deps, caller, id);
  const rules = command.rules === undefined ? trigger.rules : rulesOf(command.rules);
  const filters = command.filters === undefined ? trigger.filters : filtersOf(command.filters);
  checkPaths(rules, filters);
  const updated = await deps.triggers.update(
    trigger,
    {
      ...(command.name === undefined ? {} : { name: command.name }),
      ...(command.description === undefined ? {} : { description: command.description ?? null }),
      ...(command.request === undefined
        ? {}
        : { request: storedRequest(deps.cipher, trigger.id, unmasked(deps.cipher, trigger, command.request)) }),
      ...(command.rules === undefined ? {} : { rules }),
      ...(command.filters === undefined ? {} : { filters }),
      ...(command.enabled === undefined ? {} : { enabled: command.enabled }),
    },
    deps.clock.now().toISOString(),
  );
  if (updated === undefined) throw new ConflictError('The trigger changed meanwhile: read it again.');
  return triggerView(deps, updated);
};

export const deleteTrigger = async (deps: TriggersDeps, caller: Caller, id: string): Promise<void> => {
  const trigger = await own(deps, caller, id);
  await deps.triggers.delete(trigger.id);
};

export const rotateTriggerSecret = async (deps: TriggersDeps, caller: Caller, id: string) => {
  requireUserSession(caller, 'Rotating a trigger’s secret');
  const trigger = await own(deps, caller, id);
  const secret = deps.verifier.newSecret();
  const updated = await deps.triggers.update(
    trigger,
    { sealedSecret: deps.cipher.encrypt(secret, contextOf(trigger.id)) },
    deps.clock.now().toISOString(),
  );
  if (updated === undefined) throw new ConflictError('The trigger changed meanwhile: try again.');
  return { id: trigger.id, secret };
};

// ---- the call ---------------------------------------------------------------------------------------------------

/** The value at a dot path of a JSON payload (names, or indexes into arrays), or undefined. */
export const valueAt = (payload: unknown, path: string): unknown => {
  let current: unknown = payload;
  for (const part of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(part)) current = current[Number(part)];
    else if (typeof current === 'object' && current !== null && !Array.isArray(current) && Object.hasOwn(current, part))
      current = (current as Record<string, unknown>)[part];
    else return undefined;
  }
  return current;
};

const scalar = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : undefined;

export type HookAnswer =
  | { readonly kind: 'skipped'; readonly body: { triggered: false; reason: string } }
  | { readonly kind: 'created'; readonly answer: CreateAnswer };

/**
 * A signed call: the signature first (unknown triggers and wrong signatures look alike, and are counted per
 * trigger), then the delivery id (a replay is 409), the trigger's state and its owner, the filters, the payload's
 * values, and the normal create path as the owner. A delivery that fails to create is forgotten, so the sender
 * may retry it with the same id.
 */
export const receiveHook = async (
  deps: HookDeps,
  id: string,
  body: string,
  headers: Readonly<Record<string, string | undefined>>,
): Promise<HookAnswer> => {
  const trigger = await deps.triggers.get(id);
  const check =
    trigger === undefined
      ? ({ kind: 'invalid', reason: 'unknown trigger' } as const)
      : deps.verifier.verify(deps.cipher.decrypt(trigger.sealedSecret, contextOf(trigger.id)), body, headers);
  if (check.kind === 'invalid' || trigger === undefined) {
    const decision = await deps.limiter.take(
      `hookfail#${trigger?.id ?? id}`,
      BAD_SIGNATURES_PER_TRIGGER,
      deps.clock.now(),
    );
    if (!decision.allowed) throw new AuthRateLimitError(decision.retryAfterSeconds, 'too_many_bad_signatures');
    throw new InvalidCredentialsError(
      'The signature is not valid: sign with the trigger’s secret (Standard Webhooks webhook-id, webhook-timestamp within 5 minutes, webhook-signature; or GitHub’s X-Hub-Signature-256 with X-GitHub-Delivery).',
    );
  }
  if (!trigger.enabled) throw new ForbiddenError('This trigger is disabled.', { reason: 'trigger_disabled' });
  const owner = await deps.users.get(trigger.ownerId);
  if (owner === undefined || owner.status !== 'active')
    throw new ForbiddenError('The owner of this trigger is not active.', { reason: 'account_not_active' });
  // The trigger is a delegated credential (the delegation rule): what it needs to start its saved request, within
  // the owner's current permissions and tenant, never a power of the owner's roles (it cannot override a freeze).
  const caller = await callerOfCredential(deps.roles, owner, {
    type: 'trigger',
    id: trigger.id,
    name: trigger.name,
    scopes: TRIGGER_SCOPES,
  });
  if (!caller.permissions.has('deployments:create')) throw new InsufficientPermissionsError(['deployments:create']);

  let payload: unknown = {};
  if (body.trim() !== '') {
    try {
      payload = JSON.parse(body);
    } catch {
      throw ValidationError.field('body', 'the payload is not JSON');
    }
  }
  for (const filter of trigger.filters) {
    const value = scalar(valueAt(payload, filter.field));
    if (value === undefined || !filter.oneOf.includes(value))
      return {
        kind: 'skipped',
        body: {
          triggered: false,
          reason: `${filter.field} is ${value === undefined ? 'absent' : `'${value}'`}, not one of the filter's values`,
        },
      };
  }
  const mapped: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, path] of Object.entries(trigger.rules.variables)) {
    const value = scalar(valueAt(payload, path));
    if (value === undefined) missing.push(path);
    else mapped[name] = value;
  }
  const version =
    trigger.rules.versionRequirement === null ? undefined : scalar(valueAt(payload, trigger.rules.versionRequirement));
  if (trigger.rules.versionRequirement !== null && version === undefined)
    missing.push(trigger.rules.versionRequirement);
  if (missing.length > 0)
    throw new ValidationError(
      `The payload has no value at ${missing.join(', ')}.`,
      missing.map((path) => ({
        field: `payload.${path}`,
        code: 'VALIDATION_ERROR',
        message: 'is absent or not a value',
      })),
    );

  if (!(await deps.triggers.claimDelivery(trigger.id, check.deliveryId, DELIVERY_MEMORY_SECONDS)))
    throw new ConflictError('A replay: this webhook-id, or for GitHub this signed body, was received already.');
  const { sealed_values: sealedValues, value_names: _names, ...request } = trigger.request as StoredRequest;
  const saved = openValues(deps.cipher, trigger.id, sealedValues);
  let answer: CreateAnswer;
  try {
    answer = await createDeployment(deps.create(), caller, {
      ...request,
      ...(saved.prompted_values === undefined ? {} : { prompted_values: saved.prompted_values }),
      variables: { ...(saved.variables ?? {}), ...mapped },
      ...(version === undefined ? {} : { version_requirement: version }),
    });
  } catch (error) {
    await deps.triggers.releaseDelivery(trigger.id, check.deliveryId);
    throw error;
  }
  // After the commit nothing turns the answer into a 5xx (docs/decisions.md, the retry contract): the trigger's
  // last_triggered_at is a hint shown in lists, and a failed write of it is left as it was.
  await deps.triggers.markTriggered(trigger.id, deps.clock.now().toISOString()).catch(() => undefined);
  return { kind: 'created', answer };
};
