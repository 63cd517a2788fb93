// Lint, including the import directions of STYLE.md:
// domain/ imports only domain/ and the standard library; infra/ never imports functions/;
// nothing in production imports local/ or tests/.
import tseslint from 'typescript-eslint';

const production = ['functions/**/*.ts', 'domain/**/*.ts', 'infra/**/*.ts', 'agent/**/*.ts', 'cli/**/*.ts'];
const notLocalOrTests = [
  {
    group: ['**/local/**', '**/tests/**'],
    message: 'Production code never imports local/ or tests/ (STYLE.md rule 4).',
  },
];

const domainOnly = [
  ...notLocalOrTests,
  {
    group: ['@aws-sdk/*', 'aws-lambda', '@middy/*', 'valibot', 'jose', 'sqids'],
    message: 'domain/ imports only domain/ and the standard library (STYLE.md rule 1).',
  },
  { group: ['**/infra/**', '**/functions/**'], message: 'domain/ imports only domain/ (STYLE.md rule 1).' },
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', '.esbuild/**', '.build/**', '.serverless/**', '.local/**', 'coverage/**'],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: production,
    rules: { 'no-restricted-imports': ['error', { patterns: notLocalOrTests }] },
  },
  {
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: domainOnly }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'domain/ never reads the environment: take it as an argument.' },
        { object: 'Date', property: 'now', message: 'domain/ uses the Clock port.' },
        { object: 'crypto', property: 'randomUUID', message: 'domain/ uses the IdGenerator port.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'domain/ uses the Clock port.' },
      ],
    },
  },
  {
    // Two bounded contexts, one direction: deployments dispatch to targets, never the other way round. What both
    // need (a target's status, tags and view; a variable's sealing) lives in leaves: domain/targets/{types,status,
    // tags,views}.ts and domain/shared/.
    files: ['domain/targets/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...domainOnly,
            {
              group: ['**/deployments/**'],
              message: 'domain/targets/ never imports domain/deployments/: share through a leaf (domain/shared/).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['infra/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...notLocalOrTests,
            { group: ['**/functions/**'], message: 'infra/ never imports functions/ (STYLE.md rule 2).' },
          ],
        },
      ],
    },
  },
  {
    files: ['agent/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...notLocalOrTests,
            {
              // Relative paths: the service's own folders. Packages (semver/functions/...) are bundled into the file.
              group: [
                '../**/domain/**',
                '../**/functions/**',
                '../**/infra/**',
                '../domain/**',
                '../functions/**',
                '../infra/**',
              ],
              message:
                'The agent ships alone to managed hosts: it imports only agent/, Node built-ins and small packages its one file bundles.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...notLocalOrTests,
            {
              group: ['**/domain/**', '**/functions/**', '**/infra/**', '**/agent/**', '**/programs/**', '@aws-sdk/*'],
              message:
                'The command line ships as one small file and speaks only the public API: it imports only cli/, Node built-ins and small libraries.',
            },
          ],
        },
      ],
    },
  },
);
