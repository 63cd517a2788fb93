import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../local/service-definition.js';
import { esbuildOptionsOf, partsOf } from '../../bench/bundles.js';

describe('esbuildOptionsOf', () => {
  it('turns custom.esbuild into esbuild options as serverless-esbuild does', () => {
    // Prepare: serverless.yml's cloud entry as `serverless print --stage ci` resolves it
    const custom = {
      bundle: true,
      minify: true,
      keepNames: true,
      mainFields: ['module', 'main'],
      sourcemap: 'linked',
      sourcesContent: false,
      target: 'node22',
      platform: 'node',
      format: 'esm',
      outputFileExtension: '.mjs',
      outputWorkFolder: '.esbuild',
      exclude: [],
      external: ['@node-rs/argon2'],
      plugins: './infra/esbuild-plugins.cjs',
      packagerOptions: { scripts: ['npm ci'] },
      banner: { js: 'const require = 1;' },
      watch: { pattern: [] },
    };

    // Act
    const options = esbuildOptionsOf(custom, ROOT);

    // Assess
    const { plugins, ...rest } = options;
    expect(rest).toEqual({
      bundle: true,
      minify: true,
      keepNames: true,
      mainFields: ['module', 'main'],
      sourcemap: 'linked',
      sourcesContent: false,
      target: 'node22',
      platform: 'node',
      format: 'esm',
      external: ['@node-rs/argon2'],
      banner: { js: 'const require = 1;' },
    });
    expect(plugins?.map((p) => p.name)).toEqual([
      'builtins-as-require',
      'credentials-from-environment',
      'password-hashing-only-where-used',
    ]);
  });

  it('adds exclude to external unless it is *, and loads no plugins when none are named', () => {
    expect(esbuildOptionsOf({ exclude: ['@aws-sdk/*', 'x'], external: ['y'], plugins: [] }, ROOT)).toMatchObject({
      external: ['y', '@aws-sdk/*', 'x'],
      plugins: [],
    });
    expect(esbuildOptionsOf({ exclude: '*', external: ['y'] }, ROOT).external).toEqual(['y']);
  });
});

describe('partsOf', () => {
  it('sums the entry output’s bytes by npm package or project folder, largest first', () => {
    const metafile = {
      inputs: {},
      outputs: {
        'out/meta.mjs.map': { bytes: 1, inputs: {}, imports: [], exports: [] },
        'out/meta.mjs': {
          bytes: 100,
          entryPoint: 'functions/http/meta/router.ts',
          imports: [],
          exports: [],
          inputs: {
            'node_modules/@smithy/core/dist-es/a.js': { bytesInOutput: 30 },
            'node_modules/@smithy/core/dist-es/b.js': { bytesInOutput: 20 },
            'node_modules/sqids/dist/index.js': { bytesInOutput: 5 },
            'functions/http/meta/router.ts': { bytesInOutput: 4 },
            'functions/shared/wiring.ts': { bytesInOutput: 4 },
            'builtin-require:http': { bytesInOutput: 1 },
          },
        },
      },
    };

    expect(partsOf(metafile)).toEqual([
      { part: '@smithy/core', bytes: 50 },
      { part: 'functions/', bytes: 8 },
      { part: 'sqids', bytes: 5 },
      { part: 'builtin-require', bytes: 1 },
    ]);
  });
});
