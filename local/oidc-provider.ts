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

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The sign-in form: the authorization request rides along in hidden fields, posted back to /authorize. */
const signInForm = (
  title: string,
  params: URLSearchParams,
  users: readonly OidcPasswordUser[],
  failed: boolean,
): string => {
  const hidden = [...params.entries()]
    .filter(([name]) => name !== 'email' && name !== 'password')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const hints = users
    .map(
      (u) =>
        `<li><code>${escapeHtml(u.email)}</code> / <code>${escapeHtml(u.password)}</code>${
          (u.groups ?? []).length === 0 ? '' : ` (groups: ${escapeHtml((u.groups ?? []).join(', '))})`
        }</li>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in: ${escapeHtml(title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input[type=email],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}.error{color:#a00}code{overflow-wrap:anywhere}</style>
</head><body><main><h1>${escapeHtml(title)}</h1>
<p>A local OpenID provider for trying single sign-on on this machine.</p>
${failed ? '<p class="error" role="alert">Wrong email or password.</p>' : ''}
<form method="post" action="authorize">${hidden}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<h2>Users</h2><ul>${hints}</ul></main></body></html>`;
};

export const startOidcProvider = async (
  client: { clientId: string; clientSecret: string },
  options: OidcProviderOptions = {},
) => {
  let keys: SigningKey[] = [await newKey()];
  let user: OidcUser = { sub: 'user-1', email: 'user1@corp.example', email_verified: true, groups: [] };
  let knobs: Knobs = {};
  const codes = new Map<string, IssuedCode>();
  let issuer = '';
  let tokenRequests = 0;

  const sign = async (code: IssuedCode): Promise<string> => {
    const current = keys[keys.length - 1]!;
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

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    tokenRequests += 1;
    const form = new URLSearchParams(await readBody(req));
    const who = clientOf(req, form);
    if (who === undefined || who.id !== client.clientId || who.secret !== client.clientSecret)
      return json(res, 401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
    const code = codes.get(form.get('code') ?? '');
    codes.delete(form.get('code') ?? '');
    if (code === undefined) return json(res, 400, { error: 'invalid_grant' });
    const verifier = form.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge)
      return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verifier does not match' });
    if (form.get('redirect_uri') !== code.redirectUri) return json(res, 400, { error: 'invalid_grant' });
    return json(res, 200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: await sign(code) });
  };

  const passwordUsers = options.users ?? [];

  /** GET: the user set by signIn at once, or the form; POST: the form's email and password. */
  const authorize = (realmIssuer: string, q: URLSearchParams, res: ServerResponse, posted: boolean) => {
    let redirect: URL;
    try {
      redirect = new URL(q.get('redirect_uri') ?? '');
    } catch {
      return json(res, 400, { error: 'invalid_request', error_description: 'redirect_uri' });
    }
    if (q.get('client_id') !== client.clientId || q.get('response_type') !== 'code')
      return json(res, 400, { error: 'invalid_request' });
    if (q.get('code_challenge_method') !== 'S256' || (q.get('code_challenge') ?? '') === '')
      return json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' });
    let signedIn = user;
    if (passwordUsers.length > 0) {
      const email = (q.get('email') ?? '').trim().toLowerCase();
      const found = passwordUsers.find((u) => u.email.toLowerCase() === email && u.password === q.get('password'));
      if (found === undefined) {
        res.writeHead(posted ? 401 : 200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
          'x-frame-options': 'DENY',
        });
        return res.end(signInForm(options.title ?? 'Local SSO', q, passwordUsers, posted));
      }
      const { password: _password, ...claims } = found;
      signedIn = claims;
    }
    redirect.searchParams.set('state', q.get('state') ?? '');
    if (knobs.deny === true) redirect.searchParams.set('error', 'access_denied');
    else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, {
        issuer: realmIssuer,
        clientId: client.clientId,
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

  const discovery = (realmIssuer: string) => ({
    issuer: knobs.discoveryIssuer ?? realmIssuer,
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

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    // Realms, as Keycloak has them: /realms/<name>/... is the provider whose issuer is <base>/realms/<name>.
    const [, realm = '', path = '/'] = /^(\/realms\/[^/]+)?(\/.*)$/.exec(url.pathname) ?? [];
    const realmIssuer = `${issuer}${realm}`;
    (async () => {
      if (req.method === 'GET' && path === '/.well-known/openid-configuration')
        return json(res, 200, discovery(realmIssuer));
      if (req.method === 'GET' && path === '/jwks') return json(res, 200, { keys: keys.map((k) => k.publicJwk) });
      if (req.method === 'GET' && path === '/authorize') return authorize(realmIssuer, url.searchParams, res, false);
      if (req.method === 'POST' && path === '/authorize' && passwordUsers.length > 0)
        return authorize(realmIssuer, new URLSearchParams(await readBody(req)), res, true);
      if (req.method === 'POST' && path === '/token') return token(req, res);
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
    })().catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  issuer = `http://127.0.0.1:${port}`;

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
      user = next;
    },
    setKnobs: (next: Knobs) => {
      knobs = next;
    },
    /** A new signing key; the old ones stay in the JWKS (as providers rotate). */
    rotate: async () => {
      keys = [...keys, await newKey()];
      return keys[keys.length - 1]!.kid;
    },
    currentKid: () => keys[keys.length - 1]!.kid,
    tokenRequests: () => tokenRequests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

export type OidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;
