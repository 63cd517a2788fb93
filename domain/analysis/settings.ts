// Analysis settings: defaults merged with the overrides an admin stored (only overrides are stored; `restore`
// clears them). Every setting is documented in docs/decisions.md, "Failure analysis". The settings are one record
// shared by every tenant (the provider sees every tenant's failed output, its answer is shown to every tenant), so
// only a global caller changes, restores or tests them; a provider URL must pass the SSRF guard's policy, and the
// stored API key never follows a changed URL (the key is given again with it).
import { ValidationError } from '../errors.js';
import { ForbiddenError } from '../identity/errors.js';
import type { SecretCipher } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';
import type { AnalysisSettingsStore } from './model.js';

export type ProviderKind = 'rules' | 'openai_compatible';

export interface AnalysisSettings {
  /** Analyse failed commands at all (a deployment's own `analysis_enabled` must be true as well). */
  readonly enabled: boolean;
  /** Which failures: exit 124 (the agent's timeout). */
  readonly analyze_timeouts: boolean;
  /** Exit 130 (cancelled by a user or the service). */
  readonly analyze_cancelled: boolean;
  /** Exit -1 (the agent restarted while the command ran). */
  readonly analyze_lost: boolean;
  /** Attempts after the first before a request is failed. */
  readonly max_retries: number;
  /** `rules` (the built-in library, no network) or `openai_compatible` (a chat-completions endpoint). */
  readonly provider: ProviderKind;
  readonly provider_url: string | null;
  readonly provider_model: string | null;
  /** Write-only: stored encrypted, shown as `***` when set. */
  readonly provider_api_key: string | null;
  readonly provider_timeout_seconds: number;
  readonly provider_max_tokens: number;
  /** When the provider fails or times out, answer with the rules (else the request fails and is retried). */
  readonly fallback_to_rules: boolean;
}

export const ANALYSIS_DEFAULTS: AnalysisSettings = {
  enabled: true,
  analyze_timeouts: true,
  analyze_cancelled: false,
  analyze_lost: true,
  max_retries: 3,
  provider: 'rules',
  provider_url: null,
  provider_model: null,
  provider_api_key: null,
  provider_timeout_seconds: 15,
  provider_max_tokens: 600,
  fallback_to_rules: true,
};

export const SETTING_NAMES = Object.keys(ANALYSIS_DEFAULTS) as (keyof AnalysisSettings)[];

/** The SecretCipher context of the provider's API key (also read by domain/encryption/fields.ts). */
export const API_KEY_CONTEXT = 'analysis-provider-api-key';

/** The settings in effect: the stored overrides over the defaults, the API key opened. */
export const effectiveSettings = async (
  store: AnalysisSettingsStore,
  cipher: SecretCipher,
): Promise<{ settings: AnalysisSettings; overridden: readonly string[] }> => {
  const overrides = await store.overrides();
  const known = Object.entries(overrides).filter(([name]) => (SETTING_NAMES as string[]).includes(name));
  const merged = { ...ANALYSIS_DEFAULTS, ...Object.fromEntries(known) } as AnalysisSettings;
  const sealed = merged.provider_api_key;
  return {
    settings: {
      ...merged,
      provider_api_key: typeof sealed === 'string' ? cipher.decrypt(sealed, API_KEY_CONTEXT) : null,
    },
    overridden: known.map(([name]) => name).sort(),
  };
};

/** As an admin sees them: the key never shown. */
export const settingsView = (settings: AnalysisSettings) => ({
  ...settings,
  provider_api_key: settings.provider_api_key === null ? null : '***',
});

/** Where the provider may be called: the SSRF guard's policy for a URL an admin typed (infra/net). */
export interface ProviderUrlPolicy {
  /** Why the URL is refused (scheme, credentials, an internal address it is or resolves to), or undefined. */
  problem(url: string): Promise<string | undefined>;
}

export interface SettingsDeps {
  readonly settings: AnalysisSettingsStore;
  readonly cipher: SecretCipher;
  readonly providerUrls: ProviderUrlPolicy;
}

/**
 * The settings are shared by every tenant: a tenant-scoped caller (whatever its roles or scopes) may read them but
 * not change, restore or test them (403 FORBIDDEN, tenant_restriction, as the orchestration capacity).
 */
export const assertSharedSettingsCaller = (caller: Caller): void => {
  if (caller.tenantId !== null)
    throw new ForbiddenError(
      'The analysis settings are shared by every tenant: only a global admin can change, restore or test them.',
      { reason: 'tenant_restriction' },
    );
};

/**
 * Stores `changes` (already shaped by the endpoint's schema) over the current overrides; a null value removes that
 * override (back to the default). Refused: a tenant-scoped caller (403); a provider URL the SSRF guard refuses
 * (400 on provider_url); a provider URL different from the stored one while an API key is stored, unless the body
 * gives the key again (or null to drop it) (400 on provider_api_key: the key is never sent to a URL it was not given
 * for). The result must make sense as a whole: a provider needs a URL and a model. Nothing is stored on a refusal.
 */
export const updateSettings = async (
  deps: SettingsDeps,
  caller: Caller,
  changes: Partial<Record<keyof AnalysisSettings, unknown>>,
): Promise<void> => {
  assertSharedSettingsCaller(caller);
  const { settings: store, cipher } = deps;
  const overrides: Record<string, unknown> = { ...(await store.overrides()) };
  const url = changes.provider_url;
  if (typeof url === 'string') {
    const problem = await deps.providerUrls.problem(url);
    if (problem !== undefined) throw ValidationError.field('provider_url', `The URL ${problem}.`);
    const storedUrl = overrides['provider_url'] ?? ANALYSIS_DEFAULTS.provider_url;
    if (
      url !== storedUrl &&
      typeof overrides['provider_api_key'] === 'string' &&
      changes.provider_api_key === undefined
    )
      throw ValidationError.field(
        'provider_api_key',
        'Give provider_api_key again (or null to remove it) when changing provider_url: the stored key is never sent to another URL.',
      );
  }
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (value === null) delete overrides[name];
    else overrides[name] = name === 'provider_api_key' ? cipher.encrypt(String(value), API_KEY_CONTEXT) : value;
  }
  const next = { ...ANALYSIS_DEFAULTS, ...overrides } as AnalysisSettings;
  if (next.provider === 'openai_compatible') {
    if (next.provider_url === null)
      throw ValidationError.field('provider_url', 'provider_url is required when provider is openai_compatible.');
    if (next.provider_model === null)
      throw ValidationError.field('provider_model', 'provider_model is required when provider is openai_compatible.');
  }
  await store.save(overrides);
};

export const restoreSettings = async (store: AnalysisSettingsStore, caller: Caller): Promise<void> => {
  assertSharedSettingsCaller(caller);
  await store.save({});
};
