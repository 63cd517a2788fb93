import { randomUUID } from 'node:crypto';
import type { Uuids } from '../../domain/deployments/ports.js';

/** Random (v4) UUIDs from node:crypto. */
export const systemUuids: Uuids = { uuid: () => randomUUID() };
