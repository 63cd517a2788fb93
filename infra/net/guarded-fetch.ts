// Outgoing HTTP requests guarded against SSRF (identity providers, webhook receivers, the analysis provider): the URL is checked
// (address-policy.ts), the host name is resolved by a lookup that refuses non-public addresses at connection time (so
// DNS cannot answer one thing to the check and another to the connection), redirects are followed only when asked
// and each hop is checked again, the whole exchange has a deadline and the body a size cap. Failures are the
// policy's error (OutboundRequestError by default) with a sentence for an administrator; no body, header or secret
// of the other side is ever in one.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isAllowedHost, isRefusedAddress, urlProblem } from './address-policy.js';

/**
 * Why an outgoing request failed: the URL or an address it resolved to is refused by the policy; no answer within the
 * deadline; no connection (DNS, refused, reset, TLS); an answer past the size cap; too many or invalid redirects.
 */
export type OutboundFailure = 'refused' | 'timeout' | 'unreachable' | 'too_large' | 'redirect';

/** A refused or failed outgoing request (the default error of a policy). */
export class OutboundRequestError extends Error {
  constructor(
    message: string,
    readonly reason: OutboundFailure = 'unreachable',
  ) {
    super(message);
    this.name = 'OutboundRequestError';
  }
}

export interface FetchPolicy {
  /** Hosts exempt from the address check (OIDC_ALLOWED_HOSTS, WEBHOOK_ALLOWED_HOSTS). */
  readonly allowedHosts: readonly string[];
  /** The deadline of one request, redirects included. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRedirects: number;
  /** A body past maxBytes is cut there instead of failing the request (a webhook receiver's answer). */
  readonly truncateBody?: boolean;
  readonly userAgent?: string;
  /** The error a failure becomes (identity providers: ProviderRequestError); OutboundRequestError by default. */
  readonly fail?: (message: string, reason: OutboundFailure) => Error;
}

const made = new WeakSet<Error>();
const failure = (policy: FetchPolicy, reason: OutboundFailure, message: string): Error => {
  const error = policy.fail === undefined ? new OutboundRequestError(message, reason) : policy.fail(message, reason);
  made.add(error);
  return error;
};

export interface GuardedRequest {
  readonly method: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** GET only: follow up to policy.maxRedirects redirects, each checked like the first URL. */
  readonly followRedirects?: boolean;
}

export interface GuardedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const INTERNAL = 'it resolves to a private, loopback, link-local or otherwise internal address';

class RefusedAddressError extends Error {
  constructor() {
    super(INTERNAL);
    this.name = 'RefusedAddressError';
  }
}

/** A DNS lookup that answers only public addresses (every address of the name must be public). */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints ?? 0 }, (error, addresses) => {
    if (error !== null) return callback(error, '', 0);
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((a) => isRefusedAddress(a.address)))
      return callback(new RefusedAddressError(), '', 0);
    if ((options as { all?: boolean }).all === true)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};

const readCapped = (response: IncomingMessage, policy: FetchPolicy): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const { maxBytes } = policy;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        if (policy.truncateBody === true) {
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          response.destroy();
          resolve(Buffer.concat(chunks).toString('utf8'));
          return;
        }
        response.destroy();
        reject(failure(policy, 'too_large', `The answer is larger than ${maxBytes} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });

const once = (policy: FetchPolicy, url: URL, request: GuardedRequest, signal: AbortSignal): Promise<GuardedResponse> =>
  new Promise((resolve, reject) => {
    const exempt = isAllowedHost(policy.allowedHosts, url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: request.method,
        headers: {
          accept: 'application/json',
          'user-agent': policy.userAgent ?? 'deployer-sso',
          ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }),
          ...request.headers,
        },
        signal,
        ...(exempt ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        readCapped(response, policy).then(
          (body) =>
            resolve({
              status: response.statusCode ?? 0,
              headers: Object.fromEntries(
                Object.entries(response.headers).map(([k, v]) => [
                  k,
                  Array.isArray(v) ? v.join(', ') : String(v ?? ''),
                ]),
              ),
              body,
            }),
          reject,
        );
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });

const describe = (policy: FetchPolicy, error: unknown, signal: AbortSignal): Error => {
  if (error instanceof RefusedAddressError) return failure(policy, 'refused', `The URL is refused: ${INTERNAL}.`);
  if (signal.aborted) return failure(policy, 'timeout', 'The provider did not answer in time.');
  if (error instanceof Error && made.has(error)) return error;
  const code = (error as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return failure(policy, 'unreachable', 'The host name does not resolve.');
  // A refused connection is said as such (an administrator's most common mistake: a wrong port, a provider not
  // started): a prober learns nothing the time to this answer does not tell already, and only public addresses and
  // allowed hosts are ever connected to.
  if (code === 'ECONNREFUSED')
    return failure(policy, 'unreachable', 'The provider refused the connection (nothing listens at that port).');
  // Never the transport's own code or message (reset, a TLS detail): they tell a prober about the far side.
  return failure(policy, 'unreachable', 'The provider could not be reached.');
};

/** One guarded request (and its redirects when asked). */
export const guardedFetch = async (
  policy: FetchPolicy,
  rawUrl: string,
  request: GuardedRequest,
): Promise<GuardedResponse> => {
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let url = rawUrl;
  for (let hop = 0; ; hop++) {
    const problem = urlProblem(policy.allowedHosts, url);
    if (problem !== undefined)
      throw failure(
        policy,
        'refused',
        hop === 0 ? `The URL ${problem}.` : `The provider redirected to a URL that ${problem}.`,
      );
    let response: GuardedResponse;
    try {
      response = await once(policy, new URL(url), request, signal);
    } catch (error) {
      throw describe(policy, error, signal);
    }
    const location = response.headers['location'];
    const redirected = response.status >= 300 && response.status < 400 && location !== undefined && location !== '';
    if (!redirected || request.followRedirects !== true || request.method !== 'GET') return response;
    if (hop >= policy.maxRedirects) throw failure(policy, 'redirect', 'The provider redirected too many times.');
    try {
      url = new URL(location, url).toString();
    } catch {
      throw failure(policy, 'redirect', 'The provider redirected to an invalid URL.');
    }
  }
};

const INTERNAL_NAME = 'resolves to a private, loopback, link-local or otherwise internal address';

/**
 * Why a URL is refused before it is saved (urlProblem, then the addresses its host resolves to now), or undefined.
 * A name that does not resolve (within 2 s) is no proof of anything: every request checks again as it connects.
 */
export const savedUrlProblem = async (allowed: readonly string[], raw: string): Promise<string | undefined> => {
  const problem = urlProblem(allowed, raw);
  if (problem !== undefined) return problem;
  const url = new URL(raw);
  if (isAllowedHost(allowed, url)) return undefined;
  try {
    const addresses = await Promise.race([
      dnsLookupAll(url.hostname.replace(/^\[|\]$/g, ''), { all: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
    ]);
    return addresses.some((a) => isRefusedAddress(a.address)) ? INTERNAL_NAME : undefined;
  } catch {
    return undefined;
  }
};
