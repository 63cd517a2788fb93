// JoseOidcGateway against the tests' OIDC provider and small loopback servers: discovery, JWKS, the code exchange
// and ID token verification (jose), and the guarded client's limits (size cap, deadline, redirects).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../../domain/identity/errors.js';
import { ProviderRequestError } from '../../../domain/sso/ports.js';
import type { IdentityProvider } from '../../../domain/sso/types.js';
import { JoseOidcGateway } from '../../../infra/oidc/oidc-gateway.js';
import { startOidcProvider, type OidcProvider } from '../../../local/oidc-provider.js';

const CLIENT = { clientId: 'gw-client', clientSecret: 'gw-secret' };
let idp: OidcProvider;
let odd: Server;
let oddHost: string;

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  // Misbehaving answers: too big, never, and redirects in a circle.
  odd = createServer((req, res) => {
    if (req.url === '/big') return res.end(JSON.stringify({ keys: 'x'.repeat(300 * 1024) }));
    if (req.url === '/circle') {
      res.writeHead(302, { location: '/circle' });
      return res.end();
    }
    if (req.url === '/token-500' || req.url === '/jwks-503') {
      res.writeHead(req.url === '/token-500' ? 500 : 503, { 'content-type': 'text/plain' });
      return res.end('upstream-internal-detail');
    }
    if (req.url === '/jwks-not-json') return res.end('<html>upstream-internal-detail</html>');
    if (req.url === '/token-redirect') {
      res.writeHead(307, { location: `${idp.issuer}/realms/r/token` });
      return res.end();
    }
    // /hang: no answer
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  oddHost = `127.0.0.1:${(odd.address() as AddressInfo).port}`;
});

afterAll(async () => {
  odd.closeAllConnections();
  await new Promise<void>((resolve) => odd.close(() => resolve()));
  await idp.stop();
});

/** 10 s for an answer (a busy 2-core machine running other test files can take more than 1 s); 1 s to test the wait. */
const gateway = (timeoutMs = 10_000) =>
  new JoseOidcGateway({
    allowedHosts: [idp.host, oddHost],
    timeoutMs,
    maxBytes: 256 * 1024,
    maxRedirects: 3,
    jwksCooldownMs: 0,
  });

const providerFor = (realm: string): IdentityProvider => {
  const e = idp.endpoints(realm);
  return {
    id: `p-${realm}`,
    shortId: realm,
    name: realm,
    type: 'oidc',
    issuer: e.issuer,
    clientId: CLIENT.clientId,
    clientSecret: 'encrypted',
    tokenAuthMethod: 'client_secret_basic',
    scopes: ['openid'],
    authorizationEndpoint: e.authorization_endpoint,
    tokenEndpoint: e.token_endpoint,
    userinfoEndpoint: null,
    jwksUri: e.jwks_uri,
    idTokenAlgorithms: ['RS256'],
    emailClaim: 'email',
    groupsClaim: 'groups',
    jitProvisioning: false,
    jitTenantId: null,
    jitTrustUnverifiedEmail: false,
    linkByEmail: false,
    trustedFor2fa: false,
    enabled: true,
    tenantId: null,
    trustCeiling: [],
    createdBy: 'x',
    createdAt: '',
    updatedAt: '',
    linkedUsers: 0,
    revision: 1,
  };
};

/** An ID token as the provider issues it for one sign-in (authorize, then the code exchange through the gateway). */
const idTokenFrom = async (gw: JoseOidcGateway, provider: IdentityProvider, nonce = 'n-1') => {
  const redirectUri = 'https://deployer.example/cb';
  const verifier = 'v'.repeat(43);
  const challenge = (await import('node:crypto')).createHash('sha256').update(verifier).digest('base64url');
  const url = new URL(provider.authorizationEndpoint);
  for (const [k, v] of Object.entries({
    client_id: CLIENT.clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    state: 's',
    nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  const back = await fetch(url, { redirect: 'manual' });
  const code = new URL(back.headers.get('location')!).searchParams.get('code')!;
  return (await gw.exchangeCode(provider, CLIENT.clientSecret, { code, codeVerifier: verifier, redirectUri })).idToken;
};

describe('JoseOidcGateway', () => {
  it('discovers a provider and counts its JWKS keys (a rotated key adds one)', async () => {
    const gw = gateway();
    const found = await gw.discover(`${idp.issuer}/realms/a/`);
    expect(found.jwks_uri).toBe(`${idp.issuer}/realms/a/jwks`);
    const before = await gw.jwksKeyCount(found.jwks_uri);
    await idp.rotate();
    expect(await gw.jwksKeyCount(found.jwks_uri)).toBe(before + 1);
  });

  it('verifies an ID token and names what is wrong with a bad one', async () => {
    const gw = gateway();
    const provider = providerFor('verify');
    idp.signIn({ sub: 'u-1', email: 'u1@corp.example', groups: ['g'] });
    const claims = await gw.verifyIdToken(provider, await idTokenFrom(gw, provider), new Date());
    expect(claims).toMatchObject({ sub: 'u-1', email: 'u1@corp.example', groups: ['g'], nonce: 'n-1' });
    const refused = async (knobs: Parameters<OidcProvider['setKnobs']>[0], p = provider) => {
      idp.setKnobs(knobs);
      const token = await idTokenFrom(gw, p);
      idp.setKnobs({});
      const error = await gw.verifyIdToken(p, token, new Date()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidTokenError);
      return (error as Error).message;
    };
    expect(await refused({ badSignature: true })).toMatch(/signature/);
    expect(await refused({ audience: 'someone-else' })).toMatch(/aud/);
    expect(await refused({ expired: true })).toMatch(/expired/);
    expect(await refused({}, { ...provider, idTokenAlgorithms: ['ES256'] })).toMatch(/algorithm/);
    expect(await refused({}, { ...provider, issuer: `${idp.issuer}/realms/other` })).toMatch(/iss/);
  });

  it('probes the token endpoint: a made-up code is invalid_grant, a wrong secret invalid_client', async () => {
    const gw = gateway();
    const provider = providerFor('probe');
    expect(await gw.probeTokenEndpoint(provider, CLIENT.clientSecret, 'https://x/cb')).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
    expect(await gw.probeTokenEndpoint(provider, 'wrong', 'https://x/cb')).toEqual({
      status: 401,
      error: 'invalid_client',
    });
    expect(
      await gw.probeTokenEndpoint(
        { ...provider, tokenAuthMethod: 'client_secret_post' },
        CLIENT.clientSecret,
        'https://x/cb',
      ),
    ).toEqual({ status: 400, error: 'invalid_grant' });
    // the token endpoint's redirects are not followed
    const redirected = await gw.probeTokenEndpoint(
      { ...provider, tokenEndpoint: `http://${oddHost}/token-redirect` },
      CLIENT.clientSecret,
      'https://x/cb',
    );
    expect(redirected.status).toBe(307);
  });

  it('tells a token endpoint that refuses the code from one that fails, and a JWKS not served from a bad token', async () => {
    // Prepare
    const gw = gateway();
    const provider = providerFor('failing');
    const exchange = (p: IdentityProvider) =>
      gw
        .exchangeCode(p, CLIENT.clientSecret, {
          code: 'made-up',
          codeVerifier: 'v'.repeat(43),
          redirectUri: 'https://x/cb',
        })
        .catch((e: unknown) => e);
    idp.signIn({ sub: 'u-2', email: 'u2@corp.example' });
    const token = await idTokenFrom(gw, provider);
    // Act
    const refused = await exchange(provider);
    const failed = await exchange({ ...provider, tokenEndpoint: `http://${oddHost}/token-500` });
    const down = await exchange({ ...provider, tokenEndpoint: 'http://127.0.0.1:9/token' });
    const keys = await Promise.all(
      ['jwks-503', 'jwks-not-json'].map((path) =>
        gw
          .verifyIdToken({ ...provider, id: path, jwksUri: `http://${oddHost}/${path}` }, token, new Date())
          .catch((e: unknown) => e),
      ),
    );
    // Assess
    expect(refused).toMatchObject({ refusal: true, message: expect.stringMatching(/refused the code.*invalid_grant/) });
    expect(refused).toBeInstanceOf(ProviderRequestError);
    for (const error of [failed, down, ...keys]) {
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect(error).toMatchObject({ refusal: false });
      expect((error as Error).message).not.toMatch(/upstream-internal-detail|500|503/);
    }
    expect((failed as Error).message).toMatch(/token endpoint failed \(not 2xx\)/);
  });

  it('caps the answer’s size, the wait, and the redirects', async () => {
    const gw = gateway();
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      );
    const big = await failure(gw.jwksKeyCount(`http://${oddHost}/big`));
    expect([big instanceof ProviderRequestError, (big as Error).message]).toEqual([
      true,
      expect.stringMatching(/larger than/),
    ]);
    const hang = await failure(gateway(1000).jwksKeyCount(`http://${oddHost}/hang`));
    expect((hang as Error).message).toMatch(/did not answer in time/);
    const circle = await failure(gw.jwksKeyCount(`http://${oddHost}/circle`));
    expect((circle as Error).message).toMatch(/redirected too many times/);
  });
});
