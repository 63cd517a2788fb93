import type { OAuthTokenDeps } from '../oauth/tokens.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { ViewerClosingDeps } from './viewers.js';
import type {
  ApiKeyFactory,
  ApiKeyRepository,
  LoginThrottle,
  PasswordHasher,
  PendingTwoFactorAttempts,
  TwoFactorThrottle,
  RoleDirectory,
  SecretCipher,
  SessionRepository,
  SseTokenRepository,
  TokenGenerator,
  TokenService,
  Totp,
  UserRepository,
} from './ports.js';

export interface IdentitySettings {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly twoFactorPendingTtlSeconds: number;
  /** Code attempts a pending two-factor token allows. */
  readonly twoFactorCodesPerToken: number;
  /** Lifetime of one single-use SSE token (the spec observes 60 s). */
  readonly sseTokenTtlSeconds: number;
  /** How long an SSE session can be renewed with its refresh token. */
  readonly sseSessionTtlSeconds: number;
  /** The viewer channel's WebSocket URL (opened with ?sse_token=); null or absent: the service has none. */
  readonly viewerSocketUrl?: string | null;
}

export interface IdentityDeps extends ViewerClosingDeps {
  /** The OAuth authorization server's clients and revocations: OAuth access tokens are refused without them. */
  readonly oauth?: Pick<OAuthTokenDeps, 'clients' | 'revocations'>;
  readonly users: UserRepository;
  readonly sessions: SessionRepository;
  readonly tokens: TokenService;
  readonly roles: RoleDirectory;
  readonly hasher: PasswordHasher;
  readonly random: TokenGenerator;
  readonly throttle: LoginThrottle;
  readonly twoFactorThrottle: TwoFactorThrottle;
  readonly pendingTwoFactor: PendingTwoFactorAttempts;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly apiKeys: ApiKeyRepository;
  readonly newApiKey: ApiKeyFactory;
  readonly totp: Totp;
  readonly sseTokens: SseTokenRepository;
  readonly cipher: SecretCipher;
  /** Shown by authenticator apps next to the account. */
  readonly issuerName: string;
  readonly settings: IdentitySettings;
}
