// The caller's address.
// - Behind CloudFront (infra/edge.yml), API Gateway's `sourceIp` is an edge server's. CloudFront appends the
//   viewer's address to X-Forwarded-For (after anything the client sent), and can pass it as
//   `CloudFront-Viewer-Address` (`ip:port`). Either is trusted only when the request carries the origin secret
//   CloudFront adds (EDGE_ORIGIN_SECRET), since API Gateway's own URL is public.
// - Under serverless-offline every request comes from the local front (local/front.ts), which replaces any
//   client-sent X-Forwarded-For with the connecting address: there, and only there, that header is the caller.
// - Otherwise, API Gateway's `sourceIp`.
import { timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface ClientIpSettings {
  readonly behindLocalFront: boolean;
  readonly edgeSecret: string | undefined;
}

/** Read when asked, not at import: in the cloud the origin secret arrives at cold start (infra/secrets.ts). */
const fromEnvironment = (): ClientIpSettings => ({
  behindLocalFront: process.env['IS_OFFLINE'] === 'true',
  edgeSecret: process.env['EDGE_ORIGIN_SECRET'] || undefined,
});

const sameSecret = (given: string | undefined, expected: string): boolean =>
  given !== undefined && given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));

/** `198.51.100.7:46532` or `2001:db8::1:46532` -> the address without the port. */
const withoutPort = (viewer: string): string => viewer.slice(0, viewer.lastIndexOf(':')).replace(/^\[|\]$/g, '');

/** The entry CloudFront appended: the rightmost X-Forwarded-For entry that is not the edge itself. */
const appendedByEdge = (forwardedFor: string | undefined, edge: string): string | undefined =>
  forwardedFor
    ?.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && entry !== edge)
    .at(-1);

export const clientIp = (event: APIGatewayProxyEventV2, settings: ClientIpSettings = fromEnvironment()): string => {
  const headers = event.headers ?? {};
  const sourceIp = event.requestContext?.http?.sourceIp ?? '';
  if (settings.edgeSecret !== undefined && sameSecret(headers['x-deployer-edge'], settings.edgeSecret)) {
    const viewer = headers['cloudfront-viewer-address'];
    if (viewer !== undefined && viewer.includes(':')) return withoutPort(viewer);
    const appended = appendedByEdge(headers['x-forwarded-for'], sourceIp);
    if (appended !== undefined) return appended;
  }
  const forwarded = settings.behindLocalFront ? headers['x-forwarded-for']?.split(',')[0]?.trim() : undefined;
  return forwarded || sourceIp;
};
