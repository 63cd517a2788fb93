// A small OpenID Connect provider on loopback (node:http + jose): discovery, a JWKS whose signing key can be rotated
// (old keys stay published), an authorize endpoint, and a token endpoint (client_secret_basic or _post, PKCE S256
// checked) issuing ID tokens. Two uses:
// - `npm start -- --with-idp` (local/local-idp.ts): users with passwords sign in on a small form at /authorize, so
//   single sign-on and role mappings can be tried by hand. Not a real provider: for this machine only.
// - the tests: without users, /authorize signs in one configurable user at once and redirects back with a code.
//   Knobs make it misbehave the ways a real provider or an attacker could: a signature by a key outside the JWKS, a
//   wrong nonce, another audience, an expired token, another issuer in its discovery document. Also serves a few
//   paths for the SSRF tests (a discovery document that redirects elsewhere, a JSON document that is not OIDC).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signInForm } from './oidc-sign-in-form.js';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose';

export interface OidcUser {
  readonly sub: string;
  readonly email?: string;
  readonly email_verified?: boolean;
  readonly name?: string;
  readonly groups?: readonly string[];
}

/** A user of the sign-in form (`npm start -- --with-idp`). */
export interface OidcPasswordUser extends OidcUser {
  readonly email: string;
  readonly password: string;
}

export interface OidcProviderOptions {
  /** Users who sign in on a form at /authorize; none: /authorize signs in the user set by `signIn` at once. */
  readonly users?: readonly OidcPasswordUser[];
  /** The loopback port (0 or absent: a free one). */
  readonly port?: number;
  /** The name the sign-in form shows. */
  readonly title?: string;
}

export interface Knobs {
  /** Sign with a key that is not in the JWKS (but claims the current key id). */
  readonly badSignature?: boolean;
  /** Put this nonce in the ID token instead of the one asked for. */
  readonly nonce?: string;
  readonly audience?: string;
  /** An ID token that expired an hour ago. */
  readonly expired?: boolean;
  /** The issuer the discovery document names (a mismatch when set). */
  readonly discoveryIssuer?: string;
  /** The provider refuses the sign-in (the callback gets `error=access_denied`). */
  readonly deny?: boolean;
}

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

interface IssuedCode {
  readonly issuer: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly nonce: string;
  readonly challenge: string;
  readonly user: OidcUser;
}

const newKey = async (): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomBytes(8).toString('hex');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
};

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** What the provider's endpoints share: its keys, the user and knobs the tests set, the codes it issued. */
interface ProviderState {
  readonly client: { readonly clientId: string; readonly clientSecret: string };
  readonly passwordUsers: readonly OidcPasswordUser[];
  readonly title: string;
  readonly codes: Map<string, IssuedCode>;
  keys: SigningKey[];
  user: OidcUser;
  knobs: Knobs;
  issuer: string;
  tokenRequests: number;
}

/** The ID token for a code: signed by the current key (or a stray one), with the knobs' nonce, audience and times. */
const signIdToken = async (state: ProviderState, code: IssuedCode): Promise<string> => {
  const { knobs } = state;
  const current = state.keys[state.keys.length - 1]!;
  const signingKey = knobs.badSignature === true ? (await newKey()).privateKey : current.privateKey;
  const now = Math.floor(Date.now() / 1000);
  const { sub, groups, ...claims } = code.user;
  return new SignJWT({
    ...claims,
    ...(groups === undefined ? {} : { groups: [...groups] }),
    nonce: knobs.nonce ?? code.nonce,
  })
    .setProtectedHeader({ alg: 'RS256', kid: current.kid })
    .setIssuer(code.issuer)
    .setSubject(sub)
    .setAudience(knobs.audience ?? code.clientId)
    .setIssuedAt(knobs.expired === true ? now - 7200 : now)
    .setExpirationTime(knobs.expired === true ? now - 3600 : now + 300)
    .sign(signingKey);
};

/** The client's credentials: client_secret_basic, else client_secret_post. */
const clientOf = (req: IncomingMessage, form: URLSearchParams): { id: string; secret: string } | undefined => {
  const header = req.headers['authorization'];
  if (header?.startsWith('Basic ')) {
    const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
    return { id: decodeURIComponent(id ?? ''), secret: decodeURIComponent(secret ?? '') };
  }
  const id = form.get('client_id');
  const secret = form.get('client_secret');
  return id === null || secret === null ? undefined : { id, secret };
};

/** POST /token: a code (used once) for an ID token, the client and the PKCE verifier checked. */
const tokenEndpoint = async (state: ProviderState, req: IncomingMessage, res: ServerResponse) => {
  state.tokenRequests += 1;
  const form = new URLSearchParams(await readBody(req));
  const who = clientOf(req, form);
  if (who === undefined || who.id !== state.client.clientId || who.secret !== state.client.clientSecret)
    return json(res, 401, { error: 'invalid_client' });
  if (form.get('grant_type') !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
  const code = state.codes.get(form.get('code') ?? '');
  state.codes.delete(form.get('code') ?? '');
  if (code === undefined) return json(res, 400, { error: 'invalid_grant' });
  const verifier = form.get('code_verifier') ?? '';
  if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge)
    return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verifier does not match' });
  if (form.get('redirect_uri') !== code.redirectUri) return json(res, 400, { error: 'invalid_grant' });
  return json(res, 200, {
    access_token: 'at',
    token_type: 'Bearer',
    expires_in: 300,
    id_token: await signIdToken(state, code),
  });
};

/** The user signing in: the one set by signIn, or the form's (undefined: the form is answered instead). */
const signedInUser = (
  state: ProviderState,
  q: URLSearchParams,
  res: ServerResponse,
  posted: boolean,
): OidcUser | undefined => {
  if (state.passwordUsers.length === 0) return state.user;
  const email = (q.get('email') ?? '').trim().toLowerCase();
  const found = state.passwordUsers.find((u) => u.email.toLowerCase() === email && u.password === q.get('password'));
  if (found === undefined) {
    res.writeHead(posted ? 401 : 200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
      'x-frame-options': 'DENY',
    });
    res.end(signInForm(state.title, q, state.passwordUsers, posted));
    return undefined;
  }
  const { password: _password, ...claims } = found;
  return claims;
};

/** GET: the user set by signIn at once, or the form; POST: the form's email and password. */
const authorizeEndpoint = (
  state: ProviderState,
  realmIssuer: string,
  q: URLSearchParams,
  res: ServerResponse,
  posted: boolean,
) => {
  let redirect: URL;
  try {
    redirect = new URL(q.get('redirect_uri') ?? '');
  } catch {
    return json(res, 400, { error: 'invalid_request', error_description: 'redirect_uri' });
  }
  if (q.get('client_id') !== state.client.clientId || q.get('response_type') !== 'code')
    return json(res, 400, { error: 'invalid_request' });
  if (q.get('code_challenge_method') !== 'S256' || (q.get('code_challenge') ?? '') === '')
    return json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' });
  const signedIn = signedInUser(state, q, res, posted);
  if (signedIn === undefined) return;
  redirect.searchParams.set('state', q.get('state') ?? '');
  if (state.knobs.deny === true) redirect.searchParams.set('error', 'access_denied');
  else {
    const code = randomBytes(16).toString('hex');
    state.codes.set(code, {
      issuer: realmIssuer,
      clientId: state.client.clientId,
      redirectUri: q.get('redirect_uri') ?? '',
      nonce: q.get('nonce') ?? '',
      challenge: q.get('code_challenge') ?? '',
      user: signedIn,
    });
    redirect.searchParams.set('code', code);
  }
  res.writeHead(302, { location: redirect.toString() });
  res.end();
};

const discovery = (state: ProviderState, realmIssuer: string) => ({
  issuer: state.knobs.discoveryIssuer ?? realmIssuer,
  authorization_endpoint: `${realmIssuer}/authorize`,
  token_endpoint: `${realmIssuer}/token`,
  userinfo_endpoint: `${realmIssuer}/userinfo`,
  jwks_uri: `${realmIssuer}/jwks`,
  response_types_supported: ['code'],
  subject_types_supported: ['public'],
  scopes_supported: ['openid', 'email', 'profile', 'groups'],
  claims_supported: ['sub', 'email', 'email_verified', 'name', 'groups'],
  id_token_signing_alg_values_supported: ['RS256'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  code_challenge_methods_supported: ['S256'],
});

/** Every request: the OIDC endpoints of the realm its path names, then the SSRF fixtures, else 404. */
const route = async (state: ProviderState, req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? '/', state.issuer);
  // Realms, as Keycloak has them: /realms/<name>/... is the provider whose issuer is <base>/realms/<name>.
  const [, realm = '', path = '/'] = /^(\/realms\/[^/]+)?(\/.*)$/.exec(url.pathname) ?? [];
  const realmIssuer = `${state.issuer}${realm}`;
  if (req.method === 'GET' && path === '/.well-known/openid-configuration')
    return json(res, 200, discovery(state, realmIssuer));
  if (req.method === 'GET' && path === '/jwks') return json(res, 200, { keys: state.keys.map((k) => k.publicJwk) });
  if (req.method === 'GET' && path === '/authorize')
    return authorizeEndpoint(state, realmIssuer, url.searchParams, res, false);
  if (req.method === 'POST' && path === '/authorize' && state.passwordUsers.length > 0)
    return authorizeEndpoint(state, realmIssuer, new URLSearchParams(await readBody(req)), res, true);
  if (req.method === 'POST' && path === '/token') return tokenEndpoint(state, req, res);
  // SSRF fixtures: /redirect/<n>/.well-known/... redirects to the URL in ?to (kept by the service as an issuer
  // path), and /not-oidc/.well-known/... answers JSON that is not a discovery document.
  const redirect = /^\/redirect\/([^/]+)\/\.well-known\/openid-configuration$/.exec(path);
  if (req.method === 'GET' && redirect !== null) {
    res.writeHead(302, { location: Buffer.from(redirect[1]!, 'base64url').toString('utf8') });
    return res.end();
  }
  if (req.method === 'GET' && path === '/not-oidc/.well-known/openid-configuration')
    return json(res, 200, { hello: 'world' });
  return json(res, 404, { error: 'not_found' });
};

export const startOidcProvider = async (
  client: { clientId: string; clientSecret: string },
  options: OidcProviderOptions = {},
) => {
  const state: ProviderState = {
    client,
    passwordUsers: options.users ?? [],
    title: options.title ?? 'Local SSO',
    codes: new Map(),
    keys: [await newKey()],
    user: { sub: 'user-1', email: 'user1@corp.example', email_verified: true, groups: [] },
    knobs: {},
    issuer: '',
    tokenRequests: 0,
  };
  const server = createServer((req, res) => {
    route(state, req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  state.issuer = issuer;

  return {
    issuer,
    /** For OIDC_ALLOWED_HOSTS. */
    host: `127.0.0.1:${port}`,
    /** A path of this provider that redirects to `target` (for discovery: use it as the issuer). */
    redirectingIssuer: (target: string) => `${issuer}/redirect/${Buffer.from(target).toString('base64url')}`,
    /** The issuer and endpoints of one realm (each its own provider, as issuers are unique per provider record). */
    endpoints: (realm: string) => {
      const realmIssuer = `${issuer}/realms/${realm}`;
      return {
        issuer: realmIssuer,
        authorization_endpoint: `${realmIssuer}/authorize`,
        token_endpoint: `${realmIssuer}/token`,
        jwks_uri: `${realmIssuer}/jwks`,
      };
    },
    signIn: (next: OidcUser) => {
      state.user = next;
    },
    setKnobs: (next: Knobs) => {
      state.knobs = next;
    },
    /** A new signing key; the old ones stay in the JWKS (as providers rotate). */
    rotate: async () => {
      state.keys = [...state.keys, await newKey()];
      return state.keys[state.keys.length - 1]!.kid;
    },
    currentKid: () => state.keys[state.keys.length - 1]!.kid,
    tokenRequests: () => state.tokenRequests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

export type OidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;
