// Settings from the environment reach `npm start` on every start, not only the first (issue 30): serverless.yml as
// resolved for the local stage is cached, and the cache is keyed by every `${env:...}` value it reads too.
import { afterEach, describe, expect, it, vi } from 'vitest';

const NAMES = ['OIDC_ALLOWED_HOSTS', 'WEBHOOK_ALLOWED_HOSTS'] as const;
const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** The functions' environment as a stack that starts now (a new process, hence a fresh module) resolves it. */
const resolvedWith = async (values: Partial<Record<(typeof NAMES)[number], string>>) => {
  for (const name of NAMES) {
    const value = values[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  vi.resetModules();
  const { loadResolvedService } = await import('../../../local/service-definition.js');
  const provider = (await loadResolvedService('local'))['provider'] as { environment: Record<string, unknown> };
  return provider.environment;
};

describe('the local stage resolved from serverless.yml', () => {
  it('follows the environment from one start to the next (and back)', { timeout: 90_000 }, async () => {
    const first = await resolvedWith({ OIDC_ALLOWED_HOSTS: 'idp-a.internal:8443' });
    const second = await resolvedWith({
      OIDC_ALLOWED_HOSTS: 'idp-b.internal:8443',
      WEBHOOK_ALLOWED_HOSTS: 'hooks.internal',
    });
    const third = await resolvedWith({});
    const again = await resolvedWith({ OIDC_ALLOWED_HOSTS: 'idp-a.internal:8443' });
    expect([first['OIDC_ALLOWED_HOSTS'], first['WEBHOOK_ALLOWED_HOSTS']]).toEqual(['idp-a.internal:8443', '']);
    expect([second['OIDC_ALLOWED_HOSTS'], second['WEBHOOK_ALLOWED_HOSTS']]).toEqual([
      'idp-b.internal:8443',
      'hooks.internal',
    ]);
    expect([third['OIDC_ALLOWED_HOSTS'], third['WEBHOOK_ALLOWED_HOSTS']]).toEqual(['', '']);
    expect(again['OIDC_ALLOWED_HOSTS']).toBe('idp-a.internal:8443');
  });
});
