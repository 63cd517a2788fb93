// CORS_ORIGINS as the functions read it, and the same lists on both sides: the functions' @middy/http-cors
// (functions/shared/cors.ts) and the cloud template's httpApi.cors (infra/cors.cjs).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  CORS_ALLOW_HEADERS,
  CORS_EXPOSE_HEADERS,
  CORS_MAX_AGE_SECONDS,
  CORS_METHODS,
  parseCorsOrigins,
} from '../../../../functions/shared/cors.js';

const template = createRequire(import.meta.url)('../../../../infra/cors.cjs') as {
  CORS_METHODS: string[];
  CORS_ALLOWED_HEADERS: string[];
  CORS_EXPOSED_HEADERS: string[];
  CORS_MAX_AGE_SECONDS: number;
};

describe('CORS_ORIGINS', () => {
  it('reads exact origins, and none when unset', () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins(' https://Console.example.com , http://localhost:5173,')).toEqual([
      'https://console.example.com',
      'http://localhost:5173',
    ]);
  });

  it('refuses a wildcard, a path or another scheme', () => {
    for (const bad of [
      '*',
      'https://*.example.com',
      'https://a.example/path',
      'ftp://a.example',
      'console.example.com',
    ]) {
      expect(() => parseCorsOrigins(bad), bad).toThrow(/CORS_ORIGINS/);
    }
  });

  it('uses the same methods, headers and max age as the cloud template', () => {
    expect([...CORS_METHODS]).toEqual(template.CORS_METHODS);
    expect([...CORS_ALLOW_HEADERS]).toEqual(template.CORS_ALLOWED_HEADERS);
    expect([...CORS_EXPOSE_HEADERS]).toEqual(template.CORS_EXPOSED_HEADERS);
    expect(CORS_MAX_AGE_SECONDS).toBe(template.CORS_MAX_AGE_SECONDS);
  });
});
