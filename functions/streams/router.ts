// Lambda entry of the streaming function (serverless.yml function `stream`, a RESPONSE_STREAM function URL).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { streamRouter } from '../shared/stream.js';
import { baseShell } from '../shared/wiring.js';
import { streamRoutes } from './routes.js';

export const handler = streamRouter(streamRoutes, baseShell);
