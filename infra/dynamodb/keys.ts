// Every DynamoDB key of the single table is built here, so access patterns cannot disagree on a format.

export interface Key {
  readonly pk: string;
  readonly sk: string;
}

export const keys = {
  /** The per-entity counter behind short ids. */
  counter: (entity: string): Key => ({ pk: `COUNTER#${entity}`, sk: 'COUNTER' }),
  /** A key no record ever has; reading it is the cheapest way to prove the table answers. */
  probe: (): Key => ({ pk: 'HEALTH#PROBE', sk: 'HEALTH#PROBE' }),
  user: (id: string): Key => ({ pk: `USER#${id}`, sk: 'PROFILE' }),
  /** Uniqueness claims: one item per lower-cased email and username, written with the user in one transaction. */
  userEmail: (email: string): Key => ({ pk: `USEREMAIL#${email.toLowerCase()}`, sk: 'CLAIM' }),
  userName: (username: string): Key => ({ pk: `USERNAME#${username.toLowerCase()}`, sk: 'CLAIM' }),
  /** Every user, newest last, on gsi1. */
  usersIndex: (createdAt: string, id: string) => ({ gsi1pk: 'USERS', gsi1sk: `${createdAt}#${id}` }),
  shortId: (entity: string, shortId: string): Key => ({ pk: `SHORTID#${entity}#${shortId}`, sk: 'ALIAS' }),
  refreshToken: (tokenHash: string): Key => ({ pk: `REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  refreshFamily: (familyId: string): Key => ({ pk: `REFRESHFAMILY#${familyId}`, sk: 'FAMILY' }),
  signingKey: (kid: string): Key => ({ pk: `SIGNINGKEY#${kid}`, sk: 'KEY' }),
  currentSigningKey: (): Key => ({ pk: 'SIGNINGKEY#CURRENT', sk: 'POINTER' }),
  /** Every signing key, on gsi1 (the JWKS). */
  signingKeysIndex: (createdAt: string, kid: string) => ({ gsi1pk: 'SIGNINGKEYS', gsi1sk: `${createdAt}#${kid}` }),
  /** An API key by the hash of its full value (the authentication lookup). */
  apiKeyByHash: (keyHash: string): Key => ({ pk: `APIKEYHASH#${keyHash}`, sk: 'KEY' }),
  /** A user's API keys on gsi1, and one key by id on gsi2. */
  apiKeysOfUser: (userId: string, createdAt: string, id: string) => ({ gsi1pk: `USERAPIKEYS#${userId}`, gsi1sk: `${createdAt}#${id}` }),
  apiKeyById: (id: string) => ({ gsi2pk: `APIKEY#${id}`, gsi2sk: 'KEY' }),
  sseToken: (tokenHash: string): Key => ({ pk: `SSETOKEN#${tokenHash}`, sk: 'TOKEN' }),
  sseSession: (sessionId: string): Key => ({ pk: `SSESESSION#${sessionId}`, sk: 'SESSION' }),
  role: (id: string): Key => ({ pk: `ROLE#${id}`, sk: 'ROLE' }),
  roleName: (name: string): Key => ({ pk: `ROLENAME#${name.toLowerCase()}`, sk: 'CLAIM' }),
  /** Every custom role on gsi1. */
  rolesIndex: (name: string) => ({ gsi1pk: 'ROLES', gsi1sk: name.toLowerCase() }),
  /** The state of one general rate-limit key (a client address). */
  rateLimit: (key: string): Key => ({ pk: `RATE#${key}`, sk: 'RATE' }),
  /** Failed-login counting and lockout of one client address. */
  loginThrottle: (ip: string): Key => ({ pk: `LOGINTHROTTLE#${ip}`, sk: 'LOGINTHROTTLE' }),
} as const;
