// Which browser origins may call the API, from CORS_ORIGINS (comma-separated, exact origins such as
// `https://console.example.com`). None by default: a browser page of another origin gets no CORS header and so
// cannot read an answer. `npm start` lists its own local origins. The same lists go to API Gateway's
// `httpApi.cors` in serverless.yml, so the cloud answers as the functions do (docs/cloud.md).

export interface CorsSettings {
  readonly origins: readonly string[];
  readonly methods: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  readonly maxAgeSeconds: number;
}

export const CORS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export const CORS_ALLOW_HEADERS = ['authorization', 'content-type', 'last-event-id'] as const;
export const CORS_EXPOSE_HEADERS = ['x-request-id', 'retry-after', 'x-ratelimit-remaining'] as const;
export const CORS_MAX_AGE_SECONDS = 600;

/** `https://a.example, http://localhost:5173` -> the origins, normalised; a malformed entry is an error. */
export const parseCorsOrigins = (value: string | undefined): readonly string[] => {
  const origins: string[] = [];
  for (const entry of (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin (scheme://host[:port])`);
    }
    if (
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      entry.includes('*') ||
      url.origin !== entry.replace(/\/$/, '').toLowerCase()
    ) {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin (scheme://host[:port], no path, no wildcard)`);
    }
    origins.push(url.origin);
  }
  return origins;
};

export const corsSettings = (origins: readonly string[]): CorsSettings => ({
  origins,
  methods: CORS_METHODS,
  allowHeaders: CORS_ALLOW_HEADERS,
  exposeHeaders: CORS_EXPOSE_HEADERS,
  maxAgeSeconds: CORS_MAX_AGE_SECONDS,
});
