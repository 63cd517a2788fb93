// The shared analysis settings: only a global caller changes, restores or tests them; a provider URL the SSRF policy
// refuses is a 400 on provider_url; the stored API key never follows a changed provider_url. Each refusal stores
// nothing.
import { describe, expect, it } from 'vitest';
import type { AnalysisSettingsStore } from '../../../../domain/analysis/model.js';
import {
  assertSharedSettingsCaller,
  effectiveSettings,
  restoreSettings,
  updateSettings,
  type ProviderUrlPolicy,
} from '../../../../domain/analysis/settings.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';

class FakeSettings implements AnalysisSettingsStore {
  stored: Record<string, unknown> = {};
  saves = 0;
  async overrides() {
    return this.stored;
  }
  async save(o: Readonly<Record<string, unknown>>) {
    this.saves += 1;
    this.stored = { ...o };
  }
}

const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 5) } });
const globalAdmin: Caller = { kind: 'user', userId: 'g', tenantId: null, roles: ['admin'], permissions: new Set() };
const tenantAdmin: Caller = { ...globalAdmin, userId: 't', tenantId: 'tenant-a' };
/** Refuses hosts named `internal`, like the SSRF guard refuses internal addresses. */
const urls: ProviderUrlPolicy = {
  problem: async (url) => (new URL(url).hostname === 'internal' ? 'resolves to an internal address' : undefined),
};

const configured = async () => {
  const settings = new FakeSettings();
  const deps = { settings, cipher, providerUrls: urls };
  await updateSettings(deps, globalAdmin, {
    provider: 'openai_compatible',
    provider_url: 'https://models.example.com/v1',
    provider_model: 'm',
    provider_api_key: 'sk-original',
  });
  settings.saves = 0;
  return { settings, deps, before: { ...settings.stored } };
};

describe('shared analysis settings', () => {
  it('refuses a tenant-scoped caller at update, restore and test, with tenant_restriction; nothing stored', async () => {
    // Arrange
    const { settings, deps, before } = await configured();
    // Act
    const update = updateSettings(deps, tenantAdmin, { provider_url: 'https://evil.example.com/v1' });
    const restore = restoreSettings(settings, tenantAdmin);
    // Assess
    await expect(update).rejects.toMatchObject({ code: 'FORBIDDEN', details: { reason: 'tenant_restriction' } });
    await expect(restore).rejects.toMatchObject({ code: 'FORBIDDEN', details: { reason: 'tenant_restriction' } });
    expect(() => assertSharedSettingsCaller(tenantAdmin)).toThrow(/shared by every tenant/);
    expect(() => assertSharedSettingsCaller(globalAdmin)).not.toThrow();
    expect(settings.stored).toEqual(before);
    expect(settings.saves).toBe(0);
  });

  it('refuses a provider_url the SSRF policy refuses, naming provider_url; nothing stored', async () => {
    // Arrange
    const { settings, deps, before } = await configured();
    // Act
    const refused = updateSettings(deps, globalAdmin, {
      provider_url: 'https://internal/v1',
      provider_api_key: 'sk-new',
    });
    // Assess
    await expect(refused).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'provider_url' }] },
    });
    expect(settings.stored).toEqual(before);
  });

  it('keeps the stored key from following a changed provider_url unless it is given again', async () => {
    // Arrange
    const { settings, deps, before } = await configured();
    // Act
    const withoutKey = updateSettings(deps, globalAdmin, { provider_url: 'https://elsewhere.example.com/v1' });
    await expect(withoutKey).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'provider_api_key' }] },
    });
    const unchangedAfterRefusal = { ...settings.stored };
    await updateSettings(deps, globalAdmin, { provider_url: 'https://models.example.com/v1', max_retries: 2 });
    await updateSettings(deps, globalAdmin, {
      provider_url: 'https://elsewhere.example.com/v1',
      provider_api_key: 'sk-for-elsewhere',
    });
    const moved = (await effectiveSettings(settings, cipher)).settings;
    await updateSettings(deps, globalAdmin, { provider_url: 'https://third.example.com/v1', provider_api_key: null });
    const dropped = (await effectiveSettings(settings, cipher)).settings;
    // Assess
    expect(unchangedAfterRefusal).toEqual(before);
    expect(moved).toMatchObject({
      provider_url: 'https://elsewhere.example.com/v1',
      provider_api_key: 'sk-for-elsewhere',
    });
    expect(dropped).toMatchObject({ provider_url: 'https://third.example.com/v1', provider_api_key: null });
  });
});
