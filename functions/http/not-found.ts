// handler -> NOT_FOUND envelope. API Gateway's $default route: every path that no area function serves.
import { notFound } from '../shared/not-found.js';
import '../shared/wiring.js'; // the general rate limit applies to every call, unknown paths too

export const handler = notFound;
