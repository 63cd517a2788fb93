// handlers -> domain/analysis/{pipeline,settings}.ts: the eight Admin: analysis endpoints (api.md). Reading needs
// analysis:read, changing analysis:manage; tenant-scoped callers see their tenant's requests only, and cannot change,
// restore or test the settings every tenant shares (403 tenant_restriction).
import * as v from 'valibot';
import { ANALYSIS_STATUSES } from '../../../domain/analysis/model.js';
import {
  analysisStatus,
  listAnalysisRequests,
  retryAnalysis,
  testAnalysis,
  type AnalysisDeps,
} from '../../../domain/analysis/pipeline.js';
import {
  ANALYSIS_DEFAULTS,
  assertSharedSettingsCaller,
  effectiveSettings,
  restoreSettings,
  settingsView,
  updateSettings,
  type ProviderUrlPolicy,
} from '../../../domain/analysis/settings.js';
import { http } from '../../shared/http.js';
import { LimitQuery, QueryInt, Uuid } from '../../shared/schemas.js';
import {
  AnalysisRequestSchema,
  AnalysisSettingsSchema,
  AnalysisStatusSchema,
  TestAnalysisBody,
  TestAnalysisSchema,
  UpdateAnalysisSettingsBody,
} from './analysis-schemas.js';

export type AdminAnalysisDeps = AnalysisDeps & {
  readonly ruleSetVersion: string;
  readonly providerUrls: ProviderUrlPolicy;
};

const SHARED = 'FORBIDDEN: a tenant-scoped caller (tenant_restriction): the settings are shared by every tenant';

const ListQuery = v.object({
  status: v.optional(v.picklist(ANALYSIS_STATUSES)),
  tenant_id: v.optional(v.pipe(v.string(), v.maxLength(64))),
  limit: LimitQuery(50),
  offset: QueryInt({ min: 0, max: 1_000_000, default: 0 }),
});

const settingsAnswer = async (deps: AdminAnalysisDeps) => {
  const { settings, overridden } = await effectiveSettings(deps.settings, deps.cipher);
  return { ...settingsView(settings), rule_set_version: deps.ruleSetVersion, overridden: [...overridden] };
};

export const listRequests = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'list_analysis_requests',
      summary: 'Analysis requests, newest first (tenant_id: global callers only)',
      tags: ['admin'],
      permission: 'analysis:read',
      query: ListQuery,
      responses: {
        200: {
          description: 'A page of requests',
          schema: v.object({
            data: v.array(AnalysisRequestSchema),
            meta: v.object({ total: v.number(), limit: v.number(), offset: v.number(), has_more: v.boolean() }),
          }),
        },
      },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listAnalysisRequests(deps(), caller, query) }),
  );

export const retryRequest = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'retry_analysis_request',
      summary: 'Retry a failed request (admins) or a pending one whose retries are used up',
      tags: ['admin'],
      permission: 'analysis:manage',
      params: v.object({ id: Uuid }),
      responses: {
        200: {
          description: 'Retry scheduled',
          schema: v.object({ ...AnalysisRequestSchema.entries, message: v.string() }),
        },
        400: { description: 'VALIDATION_ERROR: the request cannot be retried in its state' },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await retryAnalysis(deps(), caller, params.id) }),
  );

export const getSettings = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'get_analysis_settings',
      summary: 'The analysis settings in effect: defaults merged with the stored overrides',
      tags: ['admin'],
      permission: 'analysis:read',
      responses: { 200: { description: 'The settings', schema: AnalysisSettingsSchema } },
    },
    async () => ({ statusCode: 200, body: await settingsAnswer(deps()) }),
  );

export const putSettings = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'update_analysis_settings',
      summary: 'Store overrides (only what is given; null removes one); the settings in effect after it',
      tags: ['admin'],
      permission: 'analysis:manage',
      body: UpdateAnalysisSettingsBody,
      responses: {
        200: { description: 'The settings', schema: AnalysisSettingsSchema },
        400: {
          description:
            'VALIDATION_ERROR: a provider_url that is not https or is (resolves to) an internal address; provider_url changed without provider_api_key while a key is stored',
        },
        403: { description: SHARED },
      },
    },
    async ({ caller, body }) => {
      await updateSettings(deps(), caller, body);
      return { statusCode: 200, body: await settingsAnswer(deps()) };
    },
  );

export const getDefaults = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'get_defaults',
      summary: 'The analysis settings’ defaults',
      tags: ['admin'],
      permission: 'analysis:read',
      responses: {
        200: {
          description: 'The defaults',
          schema: v.object({
            ...v.omit(AnalysisSettingsSchema, ['overridden']).entries,
          }),
        },
      },
    },
    async () => ({
      statusCode: 200,
      body: { ...settingsView(ANALYSIS_DEFAULTS), rule_set_version: deps().ruleSetVersion },
    }),
  );

export const restore = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'restore_analysis_settings',
      summary: 'Clear every override: the defaults apply',
      tags: ['admin'],
      permission: 'analysis:manage',
      responses: { 200: { description: 'The settings', schema: AnalysisSettingsSchema }, 403: { description: SHARED } },
    },
    async ({ caller }) => {
      await restoreSettings(deps().settings, caller);
      return { statusCode: 200, body: await settingsAnswer(deps()) };
    },
  );

export const status = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'get_analysis_status',
      summary: 'Queue depth, requests by status, the last failure, whether the provider answers',
      tags: ['admin'],
      permission: 'analysis:read',
      responses: { 200: { description: 'The status', schema: AnalysisStatusSchema } },
    },
    async ({ caller }) => ({
      statusCode: 200,
      body: await analysisStatus(deps(), caller, deps().ruleSetVersion),
    }),
  );

export const test = (deps: () => AdminAnalysisDeps) =>
  http(
    {
      operationId: 'test_analysis',
      summary: 'Run the analyzer on a sample log (nothing is stored)',
      tags: ['admin'],
      permission: 'analysis:manage',
      body: TestAnalysisBody,
      responses: {
        200: { description: 'The analysis', schema: TestAnalysisSchema },
        400: { description: 'VALIDATION_ERROR: an empty sample' },
        403: { description: SHARED },
        503: {
          description:
            'EXTERNAL_SERVICE_ERROR: the provider failed (refused, unreachable, not 2xx) and fallback_to_rules is off',
        },
      },
    },
    async ({ caller, body }) => {
      assertSharedSettingsCaller(caller);
      return { statusCode: 200, body: await testAnalysis(deps(), body) };
    },
  );
