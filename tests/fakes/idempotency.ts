// Powertools' idempotency persistence in memory (the DynamoDB layer's conditions: a record is taken unless absent,
// expired, or in progress past its in-progress expiry), shared by every caller partition of one store.
import { IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError } from '@aws-lambda-powertools/idempotency';
import { BasePersistenceLayer, IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import type { IdempotencyStore } from '../../functions/shared/idempotency.js';

class MemoryLayer extends BasePersistenceLayer {
  constructor(
    private readonly partition: string,
    private readonly records: Map<string, IdempotencyRecord>,
    private readonly failures: { update: boolean; delete: boolean },
  ) {
    super();
  }

  #id = (key: string) => `${this.partition}|${key}`;

  protected async _getRecord(key: string): Promise<IdempotencyRecord> {
    const record = this.records.get(this.#id(key));
    if (record === undefined) throw new IdempotencyItemNotFoundError();
    return record;
  }

  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const existing = this.records.get(this.#id(record.idempotencyKey));
    const free =
      existing === undefined ||
      (existing.expiryTimestamp ?? 0) < Date.now() / 1000 ||
      (existing.getStatus() === 'INPROGRESS' &&
        existing.inProgressExpiryTimestamp !== undefined &&
        existing.inProgressExpiryTimestamp < Date.now());
    if (!free) throw new IdempotencyItemAlreadyExistsError('taken', existing);
    this.records.set(this.#id(record.idempotencyKey), record);
  }

  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    if (this.failures.update) throw new Error('the table is throttling');
    this.records.set(this.#id(record.idempotencyKey), record);
  }

  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    if (this.failures.delete) throw new Error('the table is throttling');
    this.records.delete(this.#id(record.idempotencyKey));
  }
}

/** An in-memory store; `failures.update` makes storing a finished answer fail, `failures.delete` clearing one. */
export const memoryIdempotencyStore = (): IdempotencyStore & {
  readonly records: Map<string, IdempotencyRecord>;
  readonly failures: { update: boolean; delete: boolean };
} => {
  const records = new Map<string, IdempotencyRecord>();
  const failures = { update: false, delete: false };
  return { records, failures, layerFor: (userId) => new MemoryLayer(userId, records, failures) };
};
