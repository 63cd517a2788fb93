// handler -> NOT_FOUND envelope. API Gateway's $default route: every path that no area function serves.
import { notFound } from '../shared/not-found.js';

export const handler = notFound;
