// Idempotency-Key on the creates (draft-ietf-httpapi-idempotency-key-header), with Powertools' idempotency utility:
// a route whose spec says `idempotent: true` runs through `idempotentRun` when the request carries the header.
//
// - The key is scoped to the caller (the user a credential acts for) and the credential (a session, an API key, an
//   OAuth client, a trigger): Powertools hashes {user, credential, key} into the record's sort key, in the user's own
//   partition (infra/dynamodb/idempotency-store.ts).
// - The fingerprint is the request: method, path and the validated body. The same key with another fingerprint
//   answers 422 (IdempotencyKeyReusedError); while the first request is in flight, 409 CONFLICT.
// - Only a 2xx answer is stored (24 h, the table's ttl) and answered again with `idempotent-replayed: true`. A 4xx
//   or 5xx is not stored: the work was refused or failed before it committed, and a retry runs it again.
// - A request whose work succeeded but whose answer could not be stored still answers that 2xx (the record stays
//   in progress until it expires: a retry meanwhile gets 409, never a second run). So does a request whose record
//   could not be deleted after a non-2xx answer.
// - The endpoint gets the key and its hashes (`request.keyed`): a create that committed but answered 5xx (its
//   answer lost to a fault) leaves no record here, so the deployments' creates also store a claim on the key with
//   their work, and a retry answers what that claim names (domain/deployments/create.ts). Such a route says
//   `keyClaims`: a retry that Powertools finds in progress runs the endpoint with `keyed.inFlight`, which answers
//   what the claim names (the first request committed, whatever it answered or is still doing) and 409 only while
//   it names nothing. Without this, a create that committed and answered 5xx, its record left in progress, would
//   answer its retries nothing but 409 until the record expired, and a client that gave up never learns it ran.
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyPersistenceLayerError,
  IdempotencyUnknownError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { createHash } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { IdempotencyKeyReusedError, ServiceUnavailableError, ValidationError } from '../../domain/errors.js';
import { KEY_HOLDS_SECONDS, KeyInFlightError, type KeyedRequest } from '../../domain/shared/idempotency.js';
import type { HttpRequest } from './http.js';
import type { HttpResult } from './middlewares.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long a stored answer is answered again (the draft leaves it to the server; 24 h as Stripe and the issue). */
export const IDEMPOTENCY_TTL_SECONDS = KEY_HOLDS_SECONDS;
export const MAX_KEY_LENGTH = 255;

/** Where the records live: one persistence layer per caller partition (the real one: DynamoDB, the main table). */
export interface IdempotencyStore {
  readonly layerFor: (userId: string) => BasePersistenceLayer;
}

/** What Powertools hashes: `scope` is the record's key, `request` the fingerprint checked on a replay. */
export interface IdempotencyInput {
  readonly scope: { readonly user: string; readonly credential: string; readonly key: string };
  readonly request: { readonly method: string; readonly path: string; readonly body: unknown };
}

type AnyRequest = HttpRequest<unknown, unknown, unknown, unknown>;

/**
 * The key a request carries: undefined when absent; a 400 when empty, longer than 255 characters, or holding a comma
 * (the header sent twice: API Gateway and Node join repeated headers with ", ", and two keys name no one request).
 */
export const idempotencyKeyOf = (headers: AnyRequest['headers']): string | undefined => {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (key.trim() === '' || key.length > MAX_KEY_LENGTH)
    throw ValidationError.field(
      'Idempotency-Key',
      `The Idempotency-Key header must hold 1 to ${MAX_KEY_LENGTH} characters.`,
    );
  if (key.includes(','))
    throw ValidationError.field(
      'Idempotency-Key',
      'The Idempotency-Key header must be sent once and hold no comma (a repeated header arrives joined by commas).',
    );
  return key;
};

/**
 * The record's key and the request's fingerprint. The key belongs to the credential as well as the user (a session
 * `user`, else the API key's, OAuth client's or trigger's id): an answer made with one credential is never replayed
 * to a narrower one of the same user.
 */
export const idempotencyInput = (
  owner: { readonly userId: string; readonly credential: string },
  key: string,
  request: AnyRequest,
): IdempotencyInput => ({
  scope: { user: owner.userId, credential: owner.credential, key },
  request: { method: request.method.toUpperCase(), path: request.path, body: request.body ?? null },
});

const sha256 = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('base64url');

/** What the endpoint learns of its key: the key, and the hashes of its scope and of the request. */
export const keyedRequest = (input: IdempotencyInput): KeyedRequest => ({
  key: input.scope.key,
  scope: sha256(input.scope),
  fingerprint: sha256(input.request),
});

/** A non-2xx answer, carried out of the idempotent function so that Powertools deletes its record. */
class NotStored extends Error {
  constructor(readonly result: HttpResult) {
    super('not stored');
  }
}

/** A Powertools error -> the answer's domain error; other errors pass unchanged. */
export const idempotencyError = (error: unknown, key: string): unknown => {
  if (error instanceof IdempotencyValidationError) return new IdempotencyKeyReusedError(key);
  if (error instanceof IdempotencyAlreadyInProgressError) return new KeyInFlightError();
  if (error instanceof IdempotencyUnknownError)
    return new ServiceUnavailableError(
      'The request could not be checked against its Idempotency-Key right now.',
      undefined,
      { cause: error },
    );
  return error;
};

/**
 * The endpoint's function, run at most once per (caller, key): see the top of this file. Requests without the header
 * or without a caller run as before.
 */
export const idempotentRun =
  (run: (request: AnyRequest) => Promise<HttpResult>, store: IdempotencyStore, options: { keyClaims?: boolean } = {}) =>
  async (request: AnyRequest, context: Context): Promise<HttpResult> => {
    const key = idempotencyKeyOf(request.headers);
    const caller = request.caller as { userId?: string; credential?: { id: string } } | undefined;
    if (key === undefined || caller?.userId === undefined) return run(request);
    const config = new IdempotencyConfig({
      eventKeyJmesPath: 'scope',
      payloadValidationJmesPath: 'request',
      expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
      throwOnNoIdempotencyKey: true,
      // The stored answer (JSON, as Powertools keeps it), said to be a replay.
      responseHook: (response) => {
        const stored = response as { headers?: Record<string, string> };
        return { ...stored, headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' } } as typeof response;
      },
    });
    config.registerLambdaContext(context);
    const input = idempotencyInput(
      { userId: caller.userId, credential: caller.credential?.id ?? 'user' },
      key,
      request,
    );
    // What the endpoint itself answered (or threw). Powertools then stores a 2xx, or deletes the record; when that
    // bookkeeping fails, its error replaces the endpoint's outcome, which is still the truthful answer.
    let outcome: { readonly result: HttpResult } | { readonly error: unknown } | undefined;
    const once = makeIdempotent(
      async (_input: IdempotencyInput): Promise<HttpResult> => {
        let result: HttpResult;
        try {
          result = await run({ ...request, keyed: keyedRequest(input) });
        } catch (error) {
          outcome = { error };
          throw error;
        }
        outcome = { result };
        if (result.statusCode < 200 || result.statusCode > 299) throw new NotStored(result);
        return result;
      },
      { persistenceStore: store.layerFor(caller.userId), config, keyPrefix: 'IDEMPOTENCY' },
    );
    try {
      return await once(input);
    } catch (error) {
      if (error instanceof NotStored) return error.result;
      // Only Powertools' bookkeeping failed (storing a 2xx, or clearing the record after anything else): the
      // endpoint's own answer stands, and the record stays held until it expires (a retry meanwhile gets 409, or
      // what the key's claim names).
      if (outcome !== undefined && error instanceof IdempotencyPersistenceLayerError) {
        if ('result' in outcome) return outcome.result;
        throw outcome.error;
      }
      // Held by a request in flight (or left held): what it made, when the route's claim names it, answered as a
      // claim is on any retry (rendered now, so not marked replayed).
      if (error instanceof IdempotencyAlreadyInProgressError && options.keyClaims === true)
        return run({ ...request, keyed: { ...keyedRequest(input), inFlight: true } });
      throw idempotencyError(error, key);
    }
  };
