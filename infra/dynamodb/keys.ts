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
  /** The state of one general rate-limit key (a client address). */
  rateLimit: (key: string): Key => ({ pk: `RATE#${key}`, sk: 'RATE' }),
  /** Failed-login counting and lockout of one client address. */
  loginThrottle: (ip: string): Key => ({ pk: `LOGINTHROTTLE#${ip}`, sk: 'LOGINTHROTTLE' }),
} as const;
