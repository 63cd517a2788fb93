import { describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../../../domain/identity/api-keys.js';
import { authenticate } from '../../../../domain/identity/authenticate.js';
import { logout } from '../../../../domain/identity/logout.js';
import {
  issueSseToken,
  refreshSseToken,
  sseGrantStillValid,
  verifySseGrant,
  verifySseToken,
} from '../../../../domain/identity/sse-tokens.js';
import { signedIn } from '../../../fakes/identity.js';

describe('SSE tokens', () => {
  it('are single use and stand for the caller', async () => {
    const { deps, caller } = await signedIn();
    const issued = await issueSseToken(deps, caller);
    expect(issued).toMatchObject({ expires_in: 60, session_id: expect.any(String), refresh_token: expect.any(String) });
    await expect(verifySseToken(deps, issued.sse_token)).resolves.toMatchObject({
      kind: 'user',
      userId: caller.userId,
    });
    await expect(verifySseToken(deps, issued.sse_token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('expire after 60 s', async () => {
    const { deps, caller, clock } = await signedIn();
    const issued = await issueSseToken(deps, caller);
    clock.advance(60_000);
    await expect(verifySseToken(deps, issued.sse_token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('renew through the session with a rotating refresh token', async () => {
    const { deps, caller, clock } = await signedIn();
    const first = await issueSseToken(deps, caller);
    clock.advance(120_000);
    const second = await refreshSseToken(deps, { sessionId: first.session_id, refreshToken: first.refresh_token });
    expect(second.session_id).toBe(first.session_id);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    await expect(verifySseToken(deps, second.sse_token)).resolves.toMatchObject({ userId: caller.userId });
    await expect(
      refreshSseToken(deps, { sessionId: first.session_id, refreshToken: first.refresh_token }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('end the whole session when a retired refresh token is reused', async () => {
    const { deps, caller } = await signedIn();
    const first = await issueSseToken(deps, caller);
    const streaming = await verifySseGrant(deps, first.sse_token); // a stream opened from the session
    const second = await refreshSseToken(deps, { sessionId: first.session_id, refreshToken: first.refresh_token });
    await expect(sseGrantStillValid(deps, streaming.grant)).resolves.toBe(true);
    // The replay
    await expect(
      refreshSseToken(deps, { sessionId: first.session_id, refreshToken: first.refresh_token }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // Its family: the current refresh token, the token it minted, and open streams' re-check
    await expect(
      refreshSseToken(deps, { sessionId: first.session_id, refreshToken: second.refresh_token }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(verifySseToken(deps, second.sse_token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(sseGrantStillValid(deps, streaming.grant)).resolves.toBe(false);
  });

  it('stop working after a logout, and for a revoked API key', async () => {
    const { deps, caller, clock } = await signedIn();
    const asUser = await issueSseToken(deps, caller);
    const { full_key, api_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    const keyCaller = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    const asKey = await issueSseToken(deps, keyCaller);
    clock.advance(1);
    await logout(deps, caller);
    await expect(verifySseToken(deps, asUser.sse_token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await revokeApiKey(deps, caller, api_key.id);
    await expect(verifySseToken(deps, asKey.sse_token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('give open streams a re-check that fails after logout or key revocation', async () => {
    // Prepare: one stream opened as the user, one with an API key
    const { deps, caller, clock } = await signedIn();
    const { full_key, api_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    const asUser = await verifySseGrant(deps, (await issueSseToken(deps, caller)).sse_token);
    const asKey = await verifySseGrant(
      deps,
      (await issueSseToken(deps, await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1'))).sse_token,
    );
    expect([await sseGrantStillValid(deps, asUser.grant), await sseGrantStillValid(deps, asKey.grant)]).toEqual([
      true,
      true,
    ]);
    // Act + Assess
    clock.advance(1);
    await logout(deps, caller);
    expect(await sseGrantStillValid(deps, asUser.grant)).toBe(false);
    await revokeApiKey(deps, caller, api_key.id);
    expect(await sseGrantStillValid(deps, asKey.grant)).toBe(false);
  });

  it('refuses no token at all', async () => {
    const { deps } = await signedIn();
    await expect(verifySseToken(deps, undefined)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('renew only sessions of a user login: a session an API key started answers 403', async () => {
    const { deps, caller } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    const keyCaller = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    const asKey = await issueSseToken(deps, keyCaller);
    await expect(
      refreshSseToken(deps, { sessionId: asKey.session_id, refreshToken: asKey.refresh_token }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: { reason: 'user_credentials_required' },
    });
    await expect(verifySseToken(deps, asKey.sse_token)).resolves.toMatchObject({ kind: 'api_key' });
  });
});
