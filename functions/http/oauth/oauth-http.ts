// What the /oauth endpoints share: form bodies (RFC 6749 appendix B), client authentication by HTTP Basic or form
// fields, and RFC 6749 section 5.2 error answers (not the API's envelope: OAuth clients parse these).
import { authenticateTokenClient } from '../../../domain/oauth/authorization.js';
import { OAuthError, type ClientCredentials, type OAuthTokenDeps } from '../../../domain/oauth/tokens.js';
import * as v from 'valibot';
import type { HttpResult } from '../../shared/http.js';

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** An RFC 6749 section 5.2 error body, as the OAuth endpoints answer it (not the API's envelope). */
export const OAuthErrorSchema = v.object({ error: v.string(), error_description: v.optional(v.string()) });

/** The documented answer of an OAuth error status: the RFC body, named as JSON so the document shows it as is. */
export const rfcError = (description: string) => ({
  description,
  contentType: 'application/json',
  schema: OAuthErrorSchema,
});

/** The form fields of a request; invalid_request for another content type or a parameter given twice. */
export const formOf = (headers: Readonly<Record<string, string | undefined>>, raw: string | undefined) => {
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  const params = new URLSearchParams(raw ?? '');
  const fields = new Map<string, string>();
  for (const [name, value] of params) {
    if (fields.has(name)) throw new OAuthError('invalid_request', `The parameter ${name} is given more than once.`);
    fields.set(name, value);
  }
  return fields;
};

const basic = (header: string | undefined): { id: string; secret: string } | undefined => {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    // RFC 6749 2.3.1: both halves are form-urlencoded before they are joined
    const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
};

/** The client's credentials: Basic or form fields, never both (RFC 6749 2.3); invalid_client when there are none. */
export const clientCredentialsOf = (
  headers: Readonly<Record<string, string | undefined>>,
  form: ReadonlyMap<string, string>,
): ClientCredentials => {
  const authorization = headers['authorization'];
  const fromHeader = authorization === undefined ? undefined : basic(authorization);
  if (authorization !== undefined && fromHeader === undefined)
    throw new OAuthError('invalid_client', 'The Authorization header is not HTTP Basic client authentication.');
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  if (fromHeader !== undefined) {
    if (formSecret !== undefined)
      throw new OAuthError('invalid_request', 'Use one client authentication method, not Basic and client_secret.');
    if (formId !== undefined && formId !== fromHeader.id)
      throw new OAuthError('invalid_request', 'client_id differs from the authenticated client.');
    return { clientId: fromHeader.id, secret: fromHeader.secret, method: 'client_secret_basic' };
  }
  if (formId === undefined) throw new OAuthError('invalid_client', 'Client authentication is required.');
  return formSecret === undefined
    ? { clientId: formId, secret: undefined, method: 'none' }
    : { clientId: formId, secret: formSecret, method: 'client_secret_post' };
};

/**
 * The authenticated client and the form's `token` (RFC 7009 and 7662 requests); invalid_request without one. A
 * public client names itself (RFC 7009 2.1 lets it revoke its own tokens); introspection asks for a confidential one.
 */
export const clientAndToken = async (
  deps: Pick<OAuthTokenDeps, 'clients' | 'random'>,
  headers: Readonly<Record<string, string | undefined>>,
  raw: string | undefined,
  publicClients: 'allowed' | 'refused' = 'refused',
) => {
  const form = formOf(headers, raw);
  const credentials = clientCredentialsOf(headers, form);
  if (credentials.method === 'none' && publicClients === 'refused')
    throw new OAuthError('invalid_client', 'Client authentication failed.');
  const client = await authenticateTokenClient(deps, credentials);
  const token = form.get('token');
  if (token === undefined || token === '') throw new OAuthError('invalid_request', 'token is required.');
  return { client, token };
};

/** Runs an OAuth endpoint: an OAuthError becomes its RFC 6749 answer; anything else goes to the shell. */
export const oauthAnswer = async (run: () => Promise<HttpResult>): Promise<HttpResult> => {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return {
      statusCode: error.status,
      body: { error: error.code, error_description: error.description },
      headers: {
        ...NO_STORE,
        ...(error.code === 'invalid_client' ? { 'www-authenticate': 'Basic realm="deployer", charset="UTF-8"' } : {}),
        ...(error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) }),
      },
    };
  }
};
