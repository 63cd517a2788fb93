// Every response-streaming endpoint. The front (locally) and CloudFront (in the cloud) send these paths to the
// streaming function.
import type { StreamRoute } from '../shared/stream.js';
import * as deploymentLogs from './deployment-logs.js';
import * as resourceStreams from './resource-streams.js';

export const streamRoutes: readonly StreamRoute[] = [
  { method: 'GET', path: '/api/v1/deployments/{id}/logs', handler: deploymentLogs.handler },
  { method: 'GET', path: '/api/v1/sse/{resource_type}', handler: resourceStreams.handler },
];

/** Path patterns of the streaming function, as CloudFront and the local front route them. */
export const STREAM_PATH_PATTERNS: readonly string[] = ['/api/v1/sse/*', '/api/v1/deployments/*/logs'];
