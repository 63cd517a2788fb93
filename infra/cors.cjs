// CORS of the cloud template, from CORS_ORIGINS (comma-separated exact origins such as https://console.example.com;
// none by default, and then there is no CORS configuration at all: browsers on other origins get no access).
// - `httpApi`: provider.httpApi.cors of serverless.yml; API Gateway answers preflights and adds the headers.
// - `streamUrl`: the streaming function's URL (event streams come through CloudFront to it, not API Gateway); a
//   function URL lists at most six methods of at most six letters, so GET only (Lambda answers preflights itself).
// Both return false for stage `local`: under serverless-offline the application's own CORS middleware answers,
// with the same variable and the lists below (docs/cloud.md, "CORS").
'use strict';

const CORS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'last-event-id'];
const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'x-ratelimit-remaining'];
const CORS_MAX_AGE_SECONDS = 600;

/** `https://a.example, https://b.example` -> the origins, trimmed, without empty entries or duplicates. */
const parseOrigins = (value) => [
  ...new Set(
    String(value ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
  ),
];

/** The httpApi cors block for these origins, or false when there are none (no CORS configuration). */
const corsFor = (origins) => {
  if (origins.length === 0) return false;
  for (const origin of origins) {
    // API Gateway sends credentials only to origins named exactly: no wildcard, no path.
    if (!/^https?:\/\/[^/*\s]+$/.test(origin))
      throw new Error(`CORS_ORIGINS: ${JSON.stringify(origin)} is not an origin such as https://console.example.com`);
  }
  return {
    allowedOrigins: origins,
    allowedMethods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedResponseHeaders: CORS_EXPOSED_HEADERS,
    allowCredentials: true,
    maxAge: CORS_MAX_AGE_SECONDS,
  };
};

const atStage = async (resolveVariable) =>
  (await resolveVariable('sls:stage')) === 'local' ? [] : parseOrigins(process.env.CORS_ORIGINS);

/** The function URL's cors block: the same origins and headers, GET only. */
const streamCorsFor = (origins) => {
  const cors = corsFor(origins);
  return cors === false ? false : { ...cors, allowedMethods: ['GET'] };
};

module.exports = {
  httpApi: async ({ resolveVariable }) => corsFor(await atStage(resolveVariable)),
  streamUrl: async ({ resolveVariable }) => streamCorsFor(await atStage(resolveVariable)),
  corsFor,
  streamCorsFor,
  parseOrigins,
  CORS_METHODS,
  CORS_ALLOWED_HEADERS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECONDS,
};
