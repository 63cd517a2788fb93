import * as v from 'valibot';

export const UserViewSchema = v.object({
  id: v.string(),
  email: v.string(),
  username: v.string(),
  display_name: v.nullable(v.string()),
  status: v.picklist(['active', 'inactive', 'locked', 'pending']),
  roles: v.array(v.string()),
  permissions: v.array(v.string()),
  created_at: v.string(),
});

export const SessionSchema = v.object({
  access_token: v.string(),
  token_type: v.literal('Bearer'),
  expires_in: v.number(),
  user: UserViewSchema,
});

export const TwoFactorPendingSchema = v.object({ requires_2fa: v.literal(true), pending_token: v.string() });

export const Email = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.email('must be an email address'),
  v.maxLength(255),
);

export const ApiKeySchema = v.object({
  id: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  key_prefix: v.string(),
  scopes: v.array(v.string()),
  last_used_at: v.nullable(v.string()),
  last_used_ip: v.nullable(v.string()),
  created_at: v.string(),
  expires_at: v.nullable(v.string()),
});

export const Code = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^\d{6}$/, 'must be the 6 digits your authenticator app shows'),
);
export const Toggled = v.object({ message: v.string(), two_factor_enabled: v.boolean() });

/**
 * A code at sign-in: the authenticator's 6 digits, or a recovery code (`xxxxx-xxxxx`, any case; the domain reads
 * Crockford's look-alikes i, l and o as 1, 1 and 0).
 */
export const SignInCode = v.pipe(
  v.string(),
  v.trim(),
  v.regex(
    /^(?:\d{6}|[0-9a-tv-z]{5}[ -]?[0-9a-tv-z]{5})$/i,
    'must be the 6 digits your authenticator app shows, or one of your recovery codes',
  ),
);
/** Recovery codes, answered only when issued (enable, regenerate). */
const RecoveryCodes = v.pipe(
  v.array(v.string()),
  v.description('10 single-use recovery codes (`xxxxx-xxxxx`), shown only in this answer'),
);
export const Enabled = v.object({ ...Toggled.entries, recovery_codes: RecoveryCodes });
export const RecoveryCodesIssued = v.object({ message: v.string(), recovery_codes: RecoveryCodes });

export const SseTokenSchema = v.object({
  sse_token: v.string(),
  expires_in: v.number(),
  session_id: v.string(),
  refresh_token: v.string(),
  socket_url: v.pipe(
    v.nullable(v.string()),
    v.description(
      'The viewer channel: a WebSocket URL to open with ?sse_token= (live views pushed instead of streamed); null when the service has no WebSocket API',
    ),
  ),
});
