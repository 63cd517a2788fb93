// Idempotency-Key (functions/shared/idempotency.ts) through the shell, with Powertools' idempotency utility on an
// in-memory persistence layer: the decision table of the IETF draft, and the fingerprint.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { NotFoundError, ServiceUnavailableError } from '../../../../domain/errors.js';
import { KeyInFlightError } from '../../../../domain/shared/idempotency.js';
import type { Permission } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { http, type HttpRequest } from '../../../../functions/shared/http.js';
import { idempotencyInput, idempotencyKeyOf } from '../../../../functions/shared/idempotency.js';
import { memoryIdempotencyStore } from '../../../fakes/idempotency.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound } from '../../../fakes/shell.js';

const callerOf = (userId: string, apiKey?: string): Caller => ({
  kind: apiKey === undefined ? 'user' : 'api_key',
  userId,
  tenantId: null,
  roles: [],
  permissions: new Set<Permission>(['deployments:create']),
  ...(apiKey === undefined
    ? {}
    : {
        apiKeyId: apiKey,
        credential: { type: 'api_key' as const, id: apiKey, scopes: ['deployments:create' as const] },
      }),
});

/** A create that counts its runs; `behave` decides each run's answer. */
const setup = (
  behave: (run: number) => Promise<{ statusCode: number; body: unknown } | undefined> | undefined = () => undefined,
) => {
  const store = memoryIdempotencyStore();
  let runs = 0;
  const endpoint = http(
    {
      operationId: 'create_thing',
      summary: 'create',
      tags: [],
      permission: 'deployments:create',
      idempotent: true,
      body: v.object({ name: v.string(), note: v.optional(v.string()) }),
      responses: { 201: { description: 'created' } },
    },
    async ({ body }) => {
      runs += 1;
      return (await behave(runs)) ?? { statusCode: 201, body: { id: `d${runs}`, name: body.name } };
    },
  );
  const handlerFor = (userId: string, apiKey?: string) =>
    bound(endpoint, { idempotency: store, authenticate: async () => callerOf(userId, apiKey) });
  const send = async (options: { key?: string; body?: unknown; path?: string; user?: string; apiKey?: string } = {}) =>
    parseResponse(
      await handlerFor(options.user ?? 'u1', options.apiKey)(
        httpEvent('POST', options.path ?? '/api/v1/things', {
          body: JSON.stringify(options.body ?? { name: 'a' }),
          headers: {
            authorization: 'Bearer t',
            'content-type': 'application/json',
            ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
          },
        }),
        lambdaContext(),
      ),
    );
  return { store, send, runs: () => runs };
};

describe('Idempotency-Key on a create', () => {
  it('without the header, every request runs (as before), and no answer is stored', async () => {
    const { send, runs, store } = setup();

    const first = await send();
    const second = await send();

    expect([first.statusCode, second.statusCode, runs()]).toEqual([201, 201, 2]);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(store.records.size).toBe(0);
  });

  it('the same key and body answer the first answer again (status, body, replay header) without running twice', async () => {
    const { send, runs } = setup();

    const first = await send({ key: 'k-1' });
    const again = await send({ key: 'k-1', body: { name: 'a' } });

    expect(runs()).toBe(1);
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.json).toEqual(first.json);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('the same key with another body, or on another path, answers 422 VALIDATION_ERROR naming the key and runs nothing', async () => {
    const { send, runs } = setup();
    await send({ key: 'k-2' });

    const otherBody = await send({ key: 'k-2', body: { name: 'b' } });
    const otherPath = await send({ key: 'k-2', path: '/api/v1/others' });

    expect([otherBody.statusCode, otherPath.statusCode]).toEqual([422, 422]);
    expect(otherBody.json.error.code).toBe('VALIDATION_ERROR');
    expect(otherBody.json.error.message).toContain('"k-2"');
    expect(otherBody.json.error.details).toEqual({ header: 'Idempotency-Key' });
    expect(runs()).toBe(1);
  });

  it('a second use while the first is in flight answers 409 CONFLICT; a retry after it answered gets the first answer', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { send, runs } = setup(async (run) => {
      if (run === 1) await held;
      return undefined;
    });

    const first = send({ key: 'k-3' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const concurrent = await send({ key: 'k-3' });
    release();
    const answered = await first;
    const later = await send({ key: 'k-3' });

    expect(concurrent.statusCode).toBe(409);
    expect(concurrent.json.error.code).toBe('CONFLICT');
    expect(answered.statusCode).toBe(201);
    expect([later.statusCode, later.json, later.headers['idempotent-replayed']]).toEqual([201, answered.json, 'true']);
    expect(runs()).toBe(1);
  });

  it("another caller's same key is unrelated: it runs and gets its own answer", async () => {
    const { send, runs } = setup();

    const mine = await send({ key: 'shared' });
    const theirs = await send({ key: 'shared', user: 'u2' });

    expect(runs()).toBe(2);
    expect(theirs.json.id).not.toBe(mine.json.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('an empty key or one longer than 255 characters answers 400 and runs nothing; 255 is taken', async () => {
    const { send, runs } = setup();

    const empty = await send({ key: ' ' });
    const long = await send({ key: 'x'.repeat(256) });
    const longest = await send({ key: 'x'.repeat(255) });

    expect([empty.statusCode, long.statusCode, longest.statusCode]).toEqual([400, 400, 201]);
    expect(empty.json.error.code).toBe('VALIDATION_ERROR');
    expect(runs()).toBe(1);
  });

  it('a key with a comma (the header sent twice, joined by API Gateway) answers 400 VALIDATION_ERROR and runs nothing', async () => {
    const { send, runs } = setup();

    const joined = await send({ key: 'k-1, k-2' });
    const single = await send({ key: 'k-1' });

    expect([joined.statusCode, single.statusCode]).toEqual([400, 201]);
    expect(joined.json.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(joined.json.error)).toContain('Idempotency-Key');
    expect(runs()).toBe(1);
  });

  it('a 4xx or a 5xx is not stored: the retry with the same key runs again and its 2xx is stored', async () => {
    const { send, runs } = setup(async (run) => {
      if (run === 1) throw new NotFoundError('Environment', 'e1');
      if (run === 2) throw new ServiceUnavailableError('The queue cannot be reached right now.');
      if (run === 3) return { statusCode: 409, body: { error: { code: 'CONFLICT', message: 'no' } } };
      return undefined;
    });

    const refused = await send({ key: 'k-4' });
    const failed = await send({ key: 'k-4' });
    const returned4xx = await send({ key: 'k-4' });
    const created = await send({ key: 'k-4' });
    const replayed = await send({ key: 'k-4' });

    expect([refused.statusCode, failed.statusCode, returned4xx.statusCode, created.statusCode]).toEqual([
      404, 503, 409, 201,
    ]);
    expect([replayed.statusCode, replayed.headers['idempotent-replayed'], runs()]).toEqual([201, 'true', 4]);
  });

  it('a create whose answer cannot be stored still answers its 201 (never a 5xx after the work committed)', async () => {
    const { send, runs, store } = setup();
    store.failures.update = true;

    const created = await send({ key: 'k-5' });
    const retried = await send({ key: 'k-5' });

    expect(created.statusCode).toBe(201);
    expect(created.json).toEqual({ id: 'd1', name: 'a' });
    // The record stays in progress: a retry is refused (409), never run twice.
    expect([retried.statusCode, runs()]).toEqual([409, 1]);
  });

  it("a refusal or failure whose record cannot be cleared still answers the endpoint's own answer, and holds the key", async () => {
    const { send, runs, store } = setup(async (run) => {
      if (run === 1) throw new NotFoundError('Environment', 'e1');
      if (run === 2) throw new ServiceUnavailableError('The queue cannot be reached right now.');
      if (run === 3) return { statusCode: 422, body: { error: { code: 'VALIDATION_ERROR', message: 'no' } } };
      return undefined;
    });
    store.failures.delete = true;

    const refused = await send({ key: 'k-6' });
    const held = await send({ key: 'k-6' });
    const failed = await send({ key: 'k-7' });
    const returned = await send({ key: 'k-8' });

    // Before, the failed delete's error replaced each answer with 503 "could not be checked".
    expect([refused.statusCode, refused.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect([held.statusCode, held.json.error.code]).toEqual([409, 'CONFLICT']);
    expect([failed.statusCode, failed.json.error.message]).toEqual([503, 'The queue cannot be reached right now.']);
    expect([returned.statusCode, returned.json.error.message]).toEqual([422, 'no']);
    expect(runs()).toBe(3);
  });

  it('a route not marked idempotent ignores the header', async () => {
    const store = memoryIdempotencyStore();
    let runs = 0;
    const plain = bound(
      http({ operationId: 'p', summary: 'p', tags: [], permission: 'deployments:create', responses: {} }, async () => ({
        statusCode: 201,
        body: { n: ++runs },
      })),
      { idempotency: store, authenticate: async () => callerOf('u1') },
    );
    const event = () =>
      httpEvent('POST', '/p', { headers: { authorization: 'Bearer t', 'idempotency-key': 'k' }, body: '{}' });

    await plain(event(), lambdaContext());
    await plain(event(), lambdaContext());

    expect([runs, store.records.size]).toEqual([2, 0]);
  });
});

describe('a route that claims its key with its work (keyClaims), retried while the key is held', () => {
  /** A create that stores its claim with its work (as the deployments' creates): `commit` decides each run. */
  const claiming = (commit: (run: number) => 'commit, answer 503' | 'refuse, 503' | 'commit') => {
    const store = memoryIdempotencyStore();
    const claims = new Map<string, { id: string; fingerprint: string }>();
    const seen: { inFlight: boolean }[] = [];
    const endpoint = http(
      {
        operationId: 'create_claimed',
        summary: 'create',
        tags: [],
        permission: 'deployments:create',
        idempotent: true,
        keyClaims: true,
        body: v.object({ name: v.string() }),
        responses: { 201: { description: 'created' } },
      },
      async ({ keyed }) => {
        seen.push({ inFlight: keyed?.inFlight === true });
        const claimed = keyed === undefined ? undefined : claims.get(keyed.scope);
        if (claimed !== undefined) return { statusCode: 201, body: { id: claimed.id } };
        if (keyed?.inFlight === true) throw new KeyInFlightError();
        const how = commit(seen.length);
        if (how !== 'refuse, 503' && keyed !== undefined)
          claims.set(keyed.scope, { id: `d${seen.length}`, fingerprint: keyed.fingerprint });
        if (how === 'commit') return { statusCode: 201, body: { id: `d${seen.length}` } };
        throw new ServiceUnavailableError('The answer was lost.');
      },
    );
    const handler = bound(endpoint, { idempotency: store, authenticate: async () => callerOf('u1') });
    const send = async (key: string) =>
      parseResponse(
        await handler(
          httpEvent('POST', '/api/v1/claimed', {
            body: JSON.stringify({ name: 'a' }),
            headers: { authorization: 'Bearer t', 'content-type': 'application/json', 'idempotency-key': key },
          }),
          lambdaContext(),
        ),
      );
    return { store, send, seen };
  };

  /** A first request that ended as `how` with its record left held (the delete failed), then its retry. */
  const heldRetry = async (how: 'commit, answer 503' | 'refuse, 503', key: string) => {
    const { store, send, seen } = claiming(() => how);
    store.failures.delete = true;
    const first = await send(key);
    const retried = await send(key);
    return { first, retried, seen };
  };

  it('a create that committed, answered 503 and left its key held answers its retry with what it made (201)', async () => {
    const { first, retried, seen } = await heldRetry('commit, answer 503', 'c-1');

    expect([first.statusCode, first.json.error.message]).toEqual([503, 'The answer was lost.']);
    // as a claim is answered on any retry: rendered now, not a stored answer replayed
    expect([retried.statusCode, retried.json, retried.headers['idempotent-replayed']]).toEqual([
      201,
      { id: 'd1' },
      undefined,
    ]);
    // the retry only looked: nothing ran twice
    expect(seen).toEqual([{ inFlight: false }, { inFlight: true }]);
  });

  it('a key held by a create that made nothing answers 409 CONFLICT, and runs nothing', async () => {
    const { first, retried, seen } = await heldRetry('refuse, 503', 'c-2');

    expect(first.statusCode).toBe(503);
    expect([retried.statusCode, retried.json.error.code]).toEqual([409, 'CONFLICT']);
    expect(retried.json.error.details).toEqual({ header: 'Idempotency-Key' });
    expect(seen).toEqual([{ inFlight: false }, { inFlight: true }]);
  });

  it('a route without keyClaims still answers 409 to a held key, without running', async () => {
    const store = memoryIdempotencyStore();
    let runs = 0;
    const endpoint = http(
      {
        operationId: 'create_plain',
        summary: 'create',
        tags: [],
        permission: 'deployments:create',
        idempotent: true,
        responses: { 201: { description: 'created' } },
      },
      async () => {
        runs += 1;
        throw new ServiceUnavailableError('The answer was lost.');
      },
    );
    store.failures.delete = true;
    const handler = bound(endpoint, { idempotency: store, authenticate: async () => callerOf('u1') });
    const event = () =>
      httpEvent('POST', '/p', { headers: { authorization: 'Bearer t', 'idempotency-key': 'k' }, body: '{}' });

    await handler(event(), lambdaContext());
    const retried = parseResponse(await handler(event(), lambdaContext()));

    expect([retried.statusCode, runs]).toEqual([409, 1]);
  });
});

describe('the fingerprint', () => {
  const request = (over: Partial<HttpRequest<unknown, unknown, unknown, unknown>>) =>
    ({ method: 'post', path: '/api/v1/deployments', body: { a: 1 }, headers: {}, ...over }) as HttpRequest<
      unknown,
      unknown,
      unknown,
      unknown
    >;

  it('keys the record by caller and key, and fingerprints method, path and body', () => {
    expect(idempotencyInput({ userId: 'u1', credential: 'user' }, 'k', request({}))).toEqual({
      scope: { user: 'u1', credential: 'user', key: 'k' },
      request: { method: 'POST', path: '/api/v1/deployments', body: { a: 1 } },
    });
    expect(
      idempotencyInput({ userId: 'u1', credential: 'user' }, 'k', request({ body: undefined })).request.body,
    ).toBeNull();
  });

  it("a key used by the user's session is not replayed to the same user's API key (nor to another key)", async () => {
    const { send, runs } = setup();

    const bySession = await send({ key: 'shared' });
    const byKey = await send({ key: 'shared', apiKey: 'key-1' });
    const byOtherKey = await send({ key: 'shared', apiKey: 'key-2' });
    const byKeyAgain = await send({ key: 'shared', apiKey: 'key-1' });

    expect(runs()).toBe(3);
    expect([bySession.headers['idempotent-replayed'], byKey.headers['idempotent-replayed']]).toEqual([
      undefined,
      undefined,
    ]);
    expect(byOtherKey.headers['idempotent-replayed']).toBeUndefined();
    expect(byKeyAgain.headers['idempotent-replayed']).toBe('true');
    expect(byKeyAgain.json).toEqual(byKey.json);
  });

  it('a body with the same members in another order is the same request', async () => {
    const { send, runs } = setup();

    await send({ key: 'order', body: { name: 'a', note: 'n' } });
    const again = await send({ key: 'order', body: { note: 'n', name: 'a' } });

    expect([again.statusCode, again.headers['idempotent-replayed'], runs()]).toEqual([201, 'true', 1]);
  });

  it('reads the key: absent, taken as sent, or refused when empty or too long', () => {
    expect(idempotencyKeyOf({})).toBeUndefined();
    expect(idempotencyKeyOf({ 'idempotency-key': ' k ' })).toBe(' k ');
    expect(() => idempotencyKeyOf({ 'idempotency-key': '' })).toThrow(/1 to 255/);
    expect(() => idempotencyKeyOf({ 'idempotency-key': 'k'.repeat(256) })).toThrow(/1 to 255/);
    expect(() => idempotencyKeyOf({ 'idempotency-key': 'a,b' })).toThrow(/no comma/);
  });
});
