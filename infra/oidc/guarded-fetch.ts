// HTTP requests to identity providers, guarded against SSRF: the URL is checked (address-policy.ts), the host name is
// resolved by a lookup that refuses non-public addresses at connection time (so DNS cannot answer one thing to the
// check and another to the connection), redirects are followed only when asked and each hop is checked again, the
// whole exchange has a deadline and the body a size cap. Failures are ProviderRequestError with a sentence for an
// administrator; no body, header or secret of the provider is ever in one.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { ProviderRequestError } from '../../domain/sso/ports.js';
import { isAllowedHost, isRefusedAddress, urlProblem } from './address-policy.js';

export interface FetchPolicy {
  /** Hosts exempt from the address check (OIDC_ALLOWED_HOSTS). */
  readonly allowedHosts: readonly string[];
  /** The deadline of one request, redirects included. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRedirects: number;
}

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

const readCapped = (response: IncomingMessage, maxBytes: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        reject(new ProviderRequestError(`The answer is larger than ${maxBytes} bytes.`));
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
          'user-agent': 'deployer-sso',
          ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }),
          ...request.headers,
        },
        signal,
        ...(exempt ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        readCapped(response, policy.maxBytes).then(
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

const describe = (error: unknown, signal: AbortSignal): ProviderRequestError => {
  if (error instanceof ProviderRequestError) return error;
  if (error instanceof RefusedAddressError) return new ProviderRequestError(`The URL is refused: ${INTERNAL}.`);
  if (signal.aborted) return new ProviderRequestError('The provider did not answer in time.');
  const code = (error as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ProviderRequestError('The host name does not resolve.');
  return new ProviderRequestError(`The provider could not be reached${code === undefined ? '' : ` (${code})`}.`);
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
      throw new ProviderRequestError(
        hop === 0 ? `The URL ${problem}.` : `The provider redirected to a URL that ${problem}.`,
      );
    let response: GuardedResponse;
    try {
      response = await once(policy, new URL(url), request, signal);
    } catch (error) {
      throw describe(error, signal);
    }
    const location = response.headers['location'];
    const redirected = response.status >= 300 && response.status < 400 && location !== undefined && location !== '';
    if (!redirected || request.followRedirects !== true || request.method !== 'GET') return response;
    if (hop >= policy.maxRedirects) throw new ProviderRequestError('The provider redirected too many times.');
    try {
      url = new URL(location, url).toString();
    } catch {
      throw new ProviderRequestError('The provider redirected to an invalid URL.');
    }
  }
};
