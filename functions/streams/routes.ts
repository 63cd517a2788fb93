// Every response-streaming endpoint. The front (locally) and CloudFront (in the cloud) send these paths to the
// streaming function; the identity and execution issues add the deployment log and resource streams here.
import type { StreamRoute } from '../shared/stream.js';

export const streamRoutes: readonly StreamRoute[] = [];

/** Path patterns of the streaming function, as CloudFront and the local front route them. */
export const STREAM_PATH_PATTERNS: readonly string[] = ['/api/v1/sse/*', '/api/v1/deployments/*/logs'];
