// The console's static files on the local origin, as CloudFront serves them from S3 in the cloud: `GET /` (the
// page) and `/assets/*`, built in memory when the stack starts (console/build.ts). Strict headers: the page loads
// only its own script and style and talks only to its own origin.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleAsset } from '../console/build.js';

export const CONSOLE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
} as const;

/** Whether the request is for the console (and was answered). */
export const serveConsole = (
  assets: ReadonlyMap<string, ConsoleAsset>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): boolean => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const asset = assets.get(path);
  if (asset === undefined) return false;
  res.writeHead(200, {
    ...CONSOLE_HEADERS,
    'content-type': asset.contentType,
    'content-length': asset.contents.length,
    // A file not named by its contents (the page, the icon) is revalidated on every use, as CloudFront sends it.
    'cache-control': asset.cacheControl ?? 'no-cache',
    ...asset.headers,
  });
  res.end(req.method === 'HEAD' ? undefined : asset.contents);
  return true;
};
