import { defineConfig } from 'vitest/config';

// One run: unit tests (no I/O), integration tests against DynamoDB Local and local-aws-sqs started once by the
// global setup (each file uses its own table and queue names), and end-to-end tests that boot the whole stack.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/support/global-setup.ts'],
    setupFiles: ['tests/support/worker-env.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // expect.poll waits for what a busy 2-core machine may take a few seconds to show (a browser's page, a stream);
    // it returns as soon as the value is right. The default (1 s) failed a console test in a loaded CI run.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 120_000,
    env: {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  },
});
