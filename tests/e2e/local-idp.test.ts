// `npm start -- --with-idp` leaves "Local SSO" in the kept data; a later plain `npm start` must not offer its dead
// "Sign in with" button. What start.ts calls, against a stack in this process: registered and offered, then disabled
// (no longer offered, its mappings kept), then enabled again by the next `--with-idp` start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  disableLocalIdp,
  LOCAL_IDP_MAPPINGS,
  LOCAL_IDP_NAME,
  registerLocalIdp,
  startLocalOidcProvider,
} from '../../local/local-idp.js';
import type { OidcProvider } from '../../local/oidc-provider.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let idp: OidcProvider | undefined;
let idpPort: number;

beforeAll(async () => {
  idpPort = await freePort(); // each start's provider on it: the stack allows that one host
  idp = await startLocalOidcProvider(idpPort);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('localidp')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host },
  });
}, 120_000);

afterAll(async () => {
  await idp?.stop();
  await stack?.stop();
});

const api = apiClient(() => stack.baseUrl);
const offered = async () =>
  ((await api.call('GET', '/api/v1/auth/sso')).json.data as { id: string; name: string }[]).filter(
    (p) => p.name === LOCAL_IDP_NAME,
  );

describe('Local SSO across starts', () => {
  it('is disabled by a start without --with-idp, and enabled again by the next --with-idp start', async () => {
    // Prepare: a --with-idp start registered it
    const id = await registerLocalIdp(idp!, ADMIN.email);
    expect((await offered()).map((p) => p.id)).toEqual([id]);
    await idp!.stop();
    idp = undefined;

    // Act: a plain start over the kept data
    const line = await disableLocalIdp(ADMIN.email);
    // Assess: said in the banner; the sign-in page no longer offers it; kept with its mappings
    expect(line).toContain('Local SSO       disabled');
    // (the sign-in list is answered from a per-container copy for up to 5 s)
    await expect.poll(offered, { timeout: 10_000, interval: 500 }).toEqual([]);
    const token = (await api.login(ADMIN)).token;
    const kept = await api.call('GET', `/api/v1/admin/identity-providers/${id}`, { token });
    expect([kept.status, kept.json.enabled]).toEqual([200, false]);
    const mappings = await api.call('GET', `/api/v1/admin/identity-providers/${id}/role-mappings`, { token });
    expect((mappings.json as { claim_value: string }[]).map((m) => m.claim_value).sort()).toEqual(
      LOCAL_IDP_MAPPINGS.map((m) => m.claim_value).sort(),
    );
    // a second plain start has nothing to disable
    expect(await disableLocalIdp(ADMIN.email)).toBeUndefined();

    // Act: the next --with-idp start (a new provider process)
    idp = await startLocalOidcProvider(idpPort);
    const again = await registerLocalIdp(idp, ADMIN.email);
    // Assess: the same record, offered again
    expect(again).toBe(id);
    await expect.poll(async () => (await offered()).map((p) => p.id), { timeout: 10_000, interval: 500 }).toEqual([id]);
  }, 60_000);
});
