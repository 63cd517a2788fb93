import type { Clock } from '../../domain/shared/ports.js';

export const systemClock: Clock = { now: () => new Date() };
