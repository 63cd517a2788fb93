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
} as const;
