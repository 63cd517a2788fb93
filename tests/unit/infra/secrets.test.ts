// The secrets at cold start: locally nothing is fetched; in the cloud each `<NAME>_PARAMETER` is read into `<NAME>`
// (unless the value is already there), a required parameter that does not exist fails naming the parameter only, an
// optional one (the first admin's password) is left unset.
import { describe, expect, it } from 'vitest';
import { loadSecrets } from '../../../infra/secrets.js';

const store = (values: Record<string, string>) => {
  const asked: string[] = [];
  const fetch = async (name: string) => {
    asked.push(name);
    return values[name];
  };
  return { asked, fetch };
};

describe('loadSecrets', () => {
  it('fetches nothing locally, even with parameter names set', async () => {
    // Prepare
    const { asked, fetch } = store({ '/p/keys': 'k1:x' });
    const env: Record<string, string | undefined> = { STAGE: 'local', ENCRYPTION_KEYS_PARAMETER: '/p/keys' };

    // Act
    const loaded = await loadSecrets(env, fetch);

    // Assess
    expect([loaded, asked, env['ENCRYPTION_KEYS']]).toEqual([[], [], undefined]);
  });

  it('puts each named parameter into the environment in the cloud, leaving values already set alone', async () => {
    // Prepare
    const { asked, fetch } = store({ '/p/keys': 'k1:secret-ring', '/p/edge': 'edge-secret' });
    const env: Record<string, string | undefined> = {
      STAGE: 'prod',
      ENCRYPTION_KEYS_PARAMETER: '/p/keys',
      EDGE_ORIGIN_SECRET_PARAMETER: '/p/edge',
      BOOTSTRAP_ADMIN_PASSWORD: 'given',
      BOOTSTRAP_ADMIN_PASSWORD_PARAMETER: '/p/admin',
    };

    // Act
    const loaded = await loadSecrets(env, fetch);

    // Assess
    expect(loaded).toEqual(['ENCRYPTION_KEYS', 'EDGE_ORIGIN_SECRET']);
    expect(asked.sort()).toEqual(['/p/edge', '/p/keys']);
    expect(env).toMatchObject({
      ENCRYPTION_KEYS: 'k1:secret-ring',
      EDGE_ORIGIN_SECRET: 'edge-secret',
      BOOTSTRAP_ADMIN_PASSWORD: 'given',
    });
  });

  it('fails naming a missing required parameter, never a value; leaves a missing optional one unset', async () => {
    // Prepare
    const { fetch } = store({ '/p/edge': 'edge-secret' });
    const optional: Record<string, string | undefined> = { STAGE: 'prod', BOOTSTRAP_ADMIN_PASSWORD_PARAMETER: '/p/x' };

    // Act
    const failed = loadSecrets(
      { STAGE: 'prod', ENCRYPTION_KEYS_PARAMETER: '/p/keys', EDGE_ORIGIN_SECRET_PARAMETER: '/p/edge' },
      fetch,
    );
    const loaded = await loadSecrets(optional, fetch);

    // Assess
    await expect(failed).rejects.toThrow('Secret parameters not found: ENCRYPTION_KEYS_PARAMETER=/p/keys');
    await expect(failed).rejects.not.toThrow(/edge-secret/);
    expect(loaded).toEqual([]);
    expect(optional['BOOTSTRAP_ADMIN_PASSWORD']).toBeUndefined();
  });

  it('reads the public URL the stack writes after its distribution exists, and fails the cold start without it', async () => {
    // Prepare
    const { fetch } = store({ '/p/url': 'https://d111.cloudfront.net' });
    const env: Record<string, string | undefined> = {
      STAGE: 'prod',
      PUBLIC_BASE_URL: '',
      PUBLIC_BASE_URL_PARAMETER: '/p/url',
    };

    // Act
    const loaded = await loadSecrets(env, fetch);
    const early = loadSecrets({ STAGE: 'prod', PUBLIC_BASE_URL_PARAMETER: '/p/none' }, fetch);

    // Assess: a container started before the parameter exists fails its init (Lambda retries it), never serves a guess
    expect([loaded, env['PUBLIC_BASE_URL']]).toEqual([['PUBLIC_BASE_URL'], 'https://d111.cloudfront.net']);
    await expect(early).rejects.toThrow('PUBLIC_BASE_URL_PARAMETER=/p/none');
  });
});
