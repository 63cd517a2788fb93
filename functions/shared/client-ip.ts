// The caller's address. In AWS it is API Gateway's `sourceIp`. Under serverless-offline every request comes
// from the local front (local/front.ts), which replaces any client-sent X-Forwarded-For with the address that
// connected to it: there, and only there, that header is the caller.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

const behindLocalFront = process.env['IS_OFFLINE'] === 'true';

export const clientIp = (event: APIGatewayProxyEventV2, trustForwardedFor = behindLocalFront): string => {
  const forwarded = trustForwardedFor ? event.headers?.['x-forwarded-for']?.split(',')[0]?.trim() : undefined;
  return forwarded || event.requestContext?.http?.sourceIp || '';
};
