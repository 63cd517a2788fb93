// Errors of the catalog context.
import { ConflictError } from '../errors.js';

/**
 * A conditional write found the record changed since it was read (another version, a new reference, a concurrent
 * edit). Use cases re-read and retry a few times; if it keeps happening the caller gets this 409 CONFLICT.
 */
export class ConcurrentChangeError extends ConflictError {
  constructor(what: string) {
    super(`${what} changed while this request was being handled; try again.`, { reason: 'concurrent_change' });
  }
}
