// esbuild plugins of the cloud bundles (serverless.yml, custom.esbuild.plugins; tests/bench/run.ts builds with them too).
'use strict';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- serverless-esbuild loads this file with require
const { builtinModules } = require('node:module');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const { join } = require('node:path');

/**
 * Node's built-in modules are loaded with `require` instead of `import`. An ESM `import` of a built-in makes Node
 * build its ES module facade, which reads every export, lazy getters included: `node:http` then loads undici for
 * its `WebSocket` getter, about 30 ms of a cold start here for nothing. Bundled ESM dependencies (the AWS SDK's
 * `dist-es`) import `http`, `https`, `http2`, `fs`, ...; each such import becomes a `require` through the bundle's
 * banner (`const require = createRequire(import.meta.url)`).
 */
const builtinsAsRequire = {
  name: 'builtins-as-require',
  setup(build) {
    const names = builtinModules.map((name) => name.replace(/^node:/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const filter = new RegExp(`^(node:)?(${names.join('|')})$`);
    build.onResolve({ filter }, (args) =>
      args.namespace === 'builtin-require'
        ? { path: args.path, external: true }
        : { path: args.path.replace(/^node:/, ''), namespace: 'builtin-require' },
    );
    build.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => ({
      contents: `module.exports = require('node:${args.path}');`,
      loader: 'js',
    }));
  },
};

/**
 * The SDK's default credential chain (`@aws-sdk/credential-provider-node`) replaced by the environment alone
 * (infra/lambda-credentials.ts says why): about 100 KiB less in every bundle.
 */
const credentialsFromEnvironment = {
  name: 'credentials-from-environment',
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({
      path: join(__dirname, 'lambda-credentials.ts'),
    }));
  },
};

/**
 * The functions whose code hashes or verifies passwords: `auth` (login, password change, the first admin), `admin`
 * (users' passwords) and `oauth` (the authorization page's sign-in). Every authenticated function bundles the
 * identity wiring, and with it the lazy `import('@node-rs/argon2')` of infra/crypto/password-hasher.ts, which made
 * the packaging ship the native binary (about 650 KiB) in 13 of 18 zips. Elsewhere the import resolves to a module
 * that fails at load, so nothing imports the addon, serverless-esbuild installs it only into these three zips, and a
 * function that ever reached a hash without being listed here fails loudly (never a silent "wrong password").
 * tests/integration/service/serverless-config.test.ts checks the zips hold the binary exactly here.
 */
const PASSWORD_HASHING_ENTRIES = [
  'functions/http/auth/router',
  'functions/http/admin/router',
  'functions/http/oauth/router',
];
const UNAVAILABLE = 'argon2-unavailable';

const passwordHashingOnlyWhereUsed = {
  name: 'password-hashing-only-where-used',
  setup(build) {
    // serverless-esbuild builds one function at a time: `entryPoints: ['functions/http/auth/router.ts']`.
    const entries = [build.initialOptions.entryPoints ?? []]
      .flat()
      .flatMap((entry) => (typeof entry === 'string' ? [entry] : Object.values(entry)))
      .map((entry) => String(entry).replace(/\\/g, '/'));
    if (entries.some((entry) => PASSWORD_HASHING_ENTRIES.some((name) => entry.includes(name)))) return;
    build.onResolve({ filter: /^@node-rs\/argon2$/ }, () => ({ path: UNAVAILABLE, namespace: UNAVAILABLE }));
    build.onLoad({ filter: /.*/, namespace: UNAVAILABLE }, () => ({
      contents:
        "throw new Error('Password hashing (@node-rs/argon2) is not packaged in this function: " +
        "add it to PASSWORD_HASHING_ENTRIES in infra/esbuild-plugins.cjs');",
      loader: 'js',
    }));
  },
};

module.exports = [builtinsAsRequire, credentialsFromEnvironment, passwordHashingOnlyWhereUsed];
module.exports.PASSWORD_HASHING_ENTRIES = PASSWORD_HASHING_ENTRIES;
