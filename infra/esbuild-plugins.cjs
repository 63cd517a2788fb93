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

module.exports = [builtinsAsRequire, credentialsFromEnvironment];
