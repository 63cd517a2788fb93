// Ports every bounded context may use. Adapters live in infra/; tests pass fakes from tests/fakes/.

export interface Clock {
  now(): Date;
}

/** A new record identity: a UUID and the record's short id (a SqId of a per-entity counter). */
export interface NewId {
  readonly id: string;
  readonly shortId: string;
}

export interface IdGenerator {
  next(entity: string): Promise<NewId>;
}
