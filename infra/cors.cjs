// provider.httpApi.cors of serverless.yml: API Gateway answers preflights and adds the CORS headers in the cloud.
// Allowed origins come from CORS_ORIGINS (comma-separated, exact origins such as https://console.example.com);
// none by default, and then there is no CORS configuration at all: browsers on other origins get no access.
// The lists below are the ones the application's own CORS middleware uses under serverless-offline (stage
// `local`, where this returns false and the application answers preflights itself): docs/cloud.md, "CORS".
'use strict';

const CORS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'last-event-id'];
const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'x-ratelimit-remaining'];
const CORS_MAX_AGE_SECONDS = 600;

/** `https://a.example, https://b.example` -> the origins, trimmed, without empty entries or duplicates. */
const parseOrigins = (value) => [...new Set(String(value ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''))];

/** The httpApi cors block for these origins, or false when there are none (no CORS configuration). */
const corsFor = (origins) => {
  if (origins.length === 0) return false;
  for (const origin of origins) {
    // API Gateway sends credentials only to origins named exactly: no wildcard, no path.
    if (!/^https?:\/\/[^/*\s]+$/.test(origin)) throw new Error(`CORS_ORIGINS: ${JSON.stringify(origin)} is not an origin such as https://console.example.com`);
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

module.exports = async ({ resolveVariable }) => {
  const stage = await resolveVariable('sls:stage');
  if (stage === 'local') return false;
  return corsFor(parseOrigins(process.env.CORS_ORIGINS));
};
module.exports.corsFor = corsFor;
module.exports.parseOrigins = parseOrigins;
module.exports.CORS_METHODS = CORS_METHODS;
module.exports.CORS_ALLOWED_HEADERS = CORS_ALLOWED_HEADERS;
module.exports.CORS_EXPOSED_HEADERS = CORS_EXPOSED_HEADERS;
module.exports.CORS_MAX_AGE_SECONDS = CORS_MAX_AGE_SECONDS;
