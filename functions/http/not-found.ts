// handler -> NOT_FOUND envelope. API Gateway's $default route: every path that no area function serves.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { notFound } from '../shared/not-found.js';
import { bindHttp } from '../shared/shell.js';
import { baseShell } from '../shared/wiring.js';

// The general rate limit applies to every call, unknown paths too (the shell's rate gate).
export const handler = bindHttp(notFound, baseShell);
