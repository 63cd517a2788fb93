// The environment, parsed once at cold start: fails fast naming every missing or malformed variable.
import * as v from 'valibot';
import { ConfigurationError as DomainConfigurationError } from '../domain/errors.js';

const NonEmpty = v.pipe(v.string(), v.trim(), v.minLength(1));

/** An integer variable with bounds and a default. */
const Int = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    String(fallback),
  );

/** A decimal variable with bounds and a default. */
const Decimal = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+(\.\d+)?$/, 'must be a number'),
      v.transform(Number),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    String(fallback),
  );

const Env = v.object({
  STAGE: v.optional(NonEmpty, 'local'),
  AWS_REGION: v.optional(NonEmpty, 'us-east-1'),
  TABLE_NAME: NonEmpty,
  /** Where the general rate limiter keeps its buckets; TABLE_NAME unless set (tests point it nowhere). */
  RATE_LIMIT_TABLE_NAME: v.optional(NonEmpty),
  DISPATCH_QUEUE_URL: v.pipe(NonEmpty, v.url('must be a queue URL')),
  ORCHESTRATOR_QUEUE_URL: v.pipe(NonEmpty, v.url('must be a queue URL')),
  /** The failure-analysis queue; unset: failed commands are not analysed (tests of other parts). */
  ANALYSIS_QUEUE_URL: v.optional(v.pipe(NonEmpty, v.url('must be a queue URL'))),
  /** The outgoing webhooks' queue (events to fan out, delivery attempts); unset: no webhook is ever sent. */
  WEBHOOK_QUEUE_URL: v.optional(v.pipe(NonEmpty, v.url('must be a queue URL'))),
  /**
   * Hosts (`host` or `host:port`, comma-separated) webhooks may reach although they resolve to an internal address,
   * and over plain http (a receiver inside the network). Empty: public https hosts only (docs/security.md).
   */
  WEBHOOK_ALLOWED_HOSTS: v.optional(v.string(), ''),
  /**
   * Hosts (`host` or `host:port`, comma-separated) the analysis provider (the settings' provider_url) may reach
   * although they resolve to an internal address, and over plain http (a model server inside the network; the tests'
   * provider). Empty: public https hosts only (docs/security.md).
   */
  ANALYSIS_ALLOWED_HOSTS: v.optional(v.string(), ''),
  /** Webhooks to loopback (localhost, 127.0.0.1, ::1), over http too: `true` or `false`; default true only locally. */
  WEBHOOK_ALLOW_LOOPBACK: v.optional(v.picklist(['true', 'false'])),
  /** Multiplies the retry schedule's waits (1: about a day; the tests run it in seconds). */
  WEBHOOK_RETRY_SCALE: Decimal(0.00001, 100, 1),
  /** Deliveries in a row that exhaust every attempt before a subscription is disabled. */
  WEBHOOK_DISABLE_AFTER: Int(1, 1000, 5),
  /** How long a container trusts its cache of which tenants listen to which events (0: read at every event). */
  WEBHOOK_CACHE_SECONDS: Int(0, 300, 5),
  /** Letters used to encode short ids; shuffle it per installation so short ids do not reveal counts. */
  SQIDS_ALPHABET: v.optional(
    v.pipe(NonEmpty, v.regex(/^[a-zA-Z0-9]{8,}$/, 'must be at least 8 distinct ASCII letters or digits')),
    'k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt',
  ),
  SHORT_ID_MIN_LENGTH: Int(0, 32, 6),
  /** The service's base URL: the issuer of its tokens. */
  PUBLIC_BASE_URL: v.optional(v.pipe(NonEmpty, v.url('must be a URL')), 'http://localhost:3000'),
  /**
   * Keys that encrypt secrets at rest: `keyId:base64(32 bytes)[,keyId:...]`, the first one active. Needed by the
   * functions that decrypt (the cipher checks it when it is made: requireEncryptionKeys); in the cloud it comes from
   * the parameter ENCRYPTION_KEYS_PARAMETER names (infra/secrets.ts), only into those functions.
   */
  ENCRYPTION_KEYS: v.optional(
    v.pipe(
      NonEmpty,
      v.regex(/^[\w-]+:[A-Za-z0-9+/=_-]+(,[\w-]+:[A-Za-z0-9+/=_-]+)*$/, 'must be keyId:base64key[,keyId:base64key...]'),
    ),
  ),
  /**
   * Local stage only: a JSON file `{"encryptionKeys": "<ring>"}` (the local stack's `.local/secrets.json`) whose ring
   * replaces ENCRYPTION_KEYS and is re-read when the file changes (infra/crypto/key-ring-source.ts), so `npm run
   * rotate-keys` reaches the running stack. Never set in the cloud: there the ring changes with a cold start.
   */
  ENCRYPTION_KEYS_FILE: v.optional(NonEmpty),
  ACCESS_TOKEN_TTL_SECONDS: Int(60, 86_400, 3600),
  REFRESH_TOKEN_TTL_SECONDS: Int(300, 90 * 86_400, 14 * 86_400),
  TWO_FACTOR_PENDING_TTL_SECONDS: Int(30, 3600, 300),
  SSE_TOKEN_TTL_SECONDS: Int(5, 600, 60),
  SSE_SESSION_TTL_SECONDS: Int(60, 7 * 86_400, 12 * 3600),
  LOGIN_MAX_FAILURES: Int(1, 1000, 10),
  LOGIN_WINDOW_SECONDS: Int(1, 3600, 60),
  LOGIN_LOCKOUT_SECONDS: Int(1, 86_400, 300),
  /** Wrong two-factor codes per user (all pending tokens, enable, disable) in the window before the lockout. */
  TWO_FACTOR_MAX_FAILURES: Int(1, 1000, 10),
  TWO_FACTOR_WINDOW_SECONDS: Int(1, 86_400, 900),
  TWO_FACTOR_LOCKOUT_SECONDS: Int(1, 86_400, 900),
  /** Code attempts one pending two-factor token allows (it dies after them, and after one success). */
  TWO_FACTOR_CODES_PER_TOKEN: Int(1, 100, 5),
  RATE_LIMIT_PER_SECOND: Decimal(0.001, 100_000, 100),
  RATE_LIMIT_BURST: Int(1, 100_000, 200),
  /** Event streams one user may have open at once; the next answers 429. */
  STREAMS_PER_USER: Int(1, 1000, 10),
  /** Orchestration instances (concurrent running deployments) until an admin sets another number. */
  ORCHESTRATION_INSTANCES: Int(0, 1000, 4),
  /** How often the dispatcher retries a pending request whose dispatch failed before marking it failed. */
  DISPATCH_MAX_RETRIES: Int(0, 100, 5),
  /** Engine passes failing the same way in a row before the deployment is failed and its instance freed. */
  ENGINE_MAX_FAILED_PASSES: Int(1, 100, 5),
  /** The longest a deployment without deployment_timeout_seconds may run (the largest timeout one may ask for). */
  DEPLOYMENT_MAX_SECONDS: Int(1, 604_800, 604_800),
  /** Days command records and their output are kept after their deployment ends (at the latest: see the repository). */
  COMMAND_RETENTION_DAYS: Int(1, 3650, 7),
  /** How often a waiting agent long poll looks at the target's inbox again (one DynamoDB query each time). */
  AGENT_POLL_INTERVAL_MS: Int(50, 10_000, 500),
  /** The WebSocket URL agents connect to (wss://... in the cloud); unset: none is offered and agents poll. */
  AGENT_SOCKET_URL: v.optional(v.pipe(NonEmpty, v.regex(/^wss?:\/\/[^/]/, 'must be a ws:// or wss:// URL'))),
  /** The @connections management endpoint of that WebSocket API (https://{api}.execute-api.{region}.amazonaws.com/{stage}). */
  AGENT_SOCKET_ENDPOINT: v.optional(v.pipe(NonEmpty, v.url('must be a URL'))),
  /**
   * How often an idle agent on the WebSocket pings: often enough that a target is online only while heard from within
   * 60 s (decisions.md), with one ping to spare; a half-open socket (a host that lost power) holds nothing online.
   */
  AGENT_IDLE_PING_SECONDS: Int(5, 45, 25),
  /** How often a busy agent heartbeats (the engine fails a step whose agent is silent for 60 s). */
  AGENT_HEARTBEAT_SECONDS: Int(1, 30, 25),
  /**
   * Hosts (`host` or `host:port`, comma-separated) that requests to identity providers may reach although they
   * resolve to a private or loopback address, and over plain http (an IdP inside the network; the tests' provider).
   * Empty: only public https hosts (docs/security.md, "Requests to identity providers").
   */
  OIDC_ALLOWED_HOSTS: v.optional(v.string(), ''),
  /** Deadline of one request to an identity provider (discovery, JWKS, token endpoint), redirects included. */
  OIDC_HTTP_TIMEOUT_MS: Int(500, 30_000, 5000),
  /** The least time between two JWKS fetches of one provider when an ID token names an unknown key. */
  OIDC_JWKS_COOLDOWN_SECONDS: Int(0, 3600, 30),
  /** How long a started single sign-on may take at the provider before its state expires. */
  SSO_STATE_TTL_SECONDS: Int(60, 3600, 600),
  BOOTSTRAP_ADMIN_EMAIL: v.optional(v.pipe(NonEmpty, v.email('must be an email address'))),
  BOOTSTRAP_ADMIN_PASSWORD: v.optional(v.pipe(v.string(), v.minLength(8, 'must be at least 8 characters'))),
});

export type Config = Readonly<v.InferOutput<typeof Env>>;

/**
 * The environment is missing or has a malformed setting: the domain's CONFIGURATION_ERROR (500), thrown wherever a
 * function first reads its configuration. `problems` (the log's) say what is wrong with each; the message a client
 * reads names the settings and whether each is missing or invalid, never a value.
 */
export class ConfigurationError extends DomainConfigurationError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[], settings?: readonly { readonly name: string; readonly missing: boolean }[]) {
    super(
      settings === undefined
        ? `The service is not configured: ${problems.join('; ')}.`
        : `The service is not configured: ${settings.map((s) => `${s.name} is ${s.missing ? 'missing' : 'invalid'}`).join('; ')}.`,
    );
    this.problems = problems;
  }
}

export const parseConfig = (env: Readonly<Record<string, string | undefined>>): Config => {
  // serverless.yml writes `${env:X, ''}`: an empty variable is an unset one.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = v.safeParse(Env, set);
  if (!result.success) {
    const found = result.issues.map((issue) => ({
      name: v.getDotPath(issue) ?? '?',
      missing: issue.input === undefined,
      message: issue.message,
    }));
    throw new ConfigurationError(
      found.map(({ name, missing, message }) => (missing ? `${name} is missing` : `${name} ${message}`)),
      found,
    );
  }
  return Object.freeze(result.output);
};

/** Variables the service must not default outside the local stage (a guessed issuer, an open origin). */
export const REQUIRED_IN_CLOUD = ['PUBLIC_BASE_URL', 'EDGE_ORIGIN_SECRET'] as const;

/**
 * What keeps a cold start outside the local stage from serving: each required variable that is unset or empty,
 * named. STAGE is `${sls:stage}` in serverless.yml and `local` for `npm start` and the tests; unset counts as local.
 */
export const missingCloudSettings = (env: Readonly<Record<string, string | undefined>>): readonly string[] => {
  const stage = (env['STAGE'] ?? '').trim();
  if (stage === '' || stage === 'local') return [];
  const missing = REQUIRED_IN_CLOUD.filter((name) => (env[name] ?? '').trim() === '');
  return missing.length === 0
    ? []
    : [
        `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set (required outside the local stage, STAGE=${stage})`,
      ];
};

/** The key ring of a function that decrypts; a ConfigurationError naming the variable when it is not set. */
export const requireEncryptionKeys = (cfg: Config): string => {
  if (cfg.ENCRYPTION_KEYS === undefined) throw new ConfigurationError(['ENCRYPTION_KEYS is missing']);
  return cfg.ENCRYPTION_KEYS;
};

let cached: Config | undefined;

/** The process configuration; parsed on first use, then the same frozen object. */
export const config = (): Config => (cached ??= parseConfig(process.env));

/**
 * AGENT_RELEASE: the agent build the service ships, as the JSON of its manifest (dist/agent/manifest.json, written by
 * programs/build.ts; `npm start` sets it from the build it serves, serverless.yml from the built file through
 * infra/agent-release.cjs). Unset or empty: no release is known (agents are never told to update, none is outdated).
 */
const AgentReleaseSchema = v.object({
  version: v.pipe(v.string(), v.regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$/, 'must be a semantic version')),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits')),
  size: v.pipe(v.number(), v.integer(), v.minValue(1)),
  path: v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9._/-]+$/, 'must be a path on this server')),
});

export type ShippedAgentRelease = Readonly<v.InferOutput<typeof AgentReleaseSchema>>;

/** Pure: the value of AGENT_RELEASE -> the release, null when unset or empty; a ConfigurationError when malformed. */
export const parseAgentRelease = (value: string | undefined): ShippedAgentRelease | null => {
  if (value === undefined || value.trim() === '') return null;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new ConfigurationError(['AGENT_RELEASE is not JSON'], [{ name: 'AGENT_RELEASE', missing: false }]);
  }
  const result = v.safeParse(AgentReleaseSchema, json);
  if (!result.success)
    throw new ConfigurationError(
      result.issues.map((issue) => `AGENT_RELEASE.${v.getDotPath(issue) ?? '?'} ${issue.message}`),
      [{ name: 'AGENT_RELEASE', missing: false }],
    );
  const { version, sha256, size, path } = result.output;
  return Object.freeze({ version, sha256, size, path });
};

let release: { readonly value: ShippedAgentRelease | null } | undefined;

/** The shipped agent release of this process (AGENT_RELEASE), parsed on first use. */
export const agentRelease = (): ShippedAgentRelease | null =>
  (release ??= { value: parseAgentRelease(process.env['AGENT_RELEASE']) }).value;
