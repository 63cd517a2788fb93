// The cloud bundles' esbuild plugins, applied by a real esbuild build of an entry that makes an SDK client: the
// default credential chain is replaced by the environment-only provider (its nested SSO/STS clients and metadata
// providers gone from the bundle), and the provider it ships reads the role credentials Lambda puts there.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../local/service-definition.js';
import { defaultProvider } from '../../../infra/lambda-credentials.js';

const plugins = createRequire(import.meta.url)(join(ROOT, 'infra/esbuild-plugins.cjs')) as Plugin[];

const inputsOf = async (usePlugins: boolean): Promise<string[]> => {
  const result = await build({
    stdin: {
      contents: "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; export const c = new DynamoDBClient({});",
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'silent',
    plugins: usePlugins ? plugins : [],
  });
  return Object.keys(result.metafile.inputs);
};

describe('esbuild plugins of the cloud bundles', () => {
  it('bundle credentials from the environment instead of the default chain', async () => {
    // Act
    const [withPlugins, without] = await Promise.all([inputsOf(true), inputsOf(false)]);

    // Assess: without the plugin the chain and its nested clients are in; with it, only the environment provider
    const chain = /credential-provider-(node|ini|sso|imds|process|web-identity)|nested-clients/;
    expect(without.some((path) => chain.test(path))).toBe(true);
    expect(withPlugins.filter((path) => chain.test(path))).toEqual([]);
    expect(withPlugins).toContain('infra/lambda-credentials.ts');
    expect(withPlugins.some((path) => path.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
  }, 30_000);

  it('the provider answers the role credentials Lambda puts in the environment', async () => {
    // Prepare
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'tok',
    });
    try {
      // Act
      const credentials = await defaultProvider()();

      // Assess
      expect(credentials).toMatchObject({ accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'tok' });
    } finally {
      process.env = saved;
    }
  });
});

/** A bundle of `entry` (a path under the project) that loads Argon2 lazily, as infra/crypto/password-hasher.ts does. */
const argon2Bundle = async (entry: string) => {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    external: ['@node-rs/argon2'],
    metafile: true,
    logLevel: 'silent',
    plugins,
    absWorkingDir: ROOT,
    outdir: '/out',
  });
  return result.outputFiles[0]!.text;
};

describe('password hashing only where passwords are hashed', () => {
  it('keeps the Argon2 import in the functions that hash, and makes it fail loudly everywhere else', async () => {
    const { PASSWORD_HASHING_ENTRIES } = createRequire(import.meta.url)(join(ROOT, 'infra/esbuild-plugins.cjs')) as {
      PASSWORD_HASHING_ENTRIES: string[];
    };
    expect(PASSWORD_HASHING_ENTRIES).toEqual([
      'functions/http/auth/router',
      'functions/http/admin/router',
      'functions/http/oauth/router',
    ]);
    // The hasher module itself, bundled as the entry of a listed function and of another one.
    const hashing = await argon2Bundle('functions/http/auth/router.ts');
    expect(hashing).toContain('import("@node-rs/argon2")');
    const other = await argon2Bundle('functions/queues/dispatch-consumer.ts');
    expect(other).not.toMatch(/import\(\s*"@node-rs\/argon2"\s*\)|from\s*"@node-rs\/argon2"/);
    expect(other).toContain('Password hashing (@node-rs/argon2) is not packaged in this function');
  });
});
