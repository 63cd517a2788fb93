// Lint, including the import directions of STYLE.md:
// domain/ imports only domain/, protocol/ and the standard library; infra/ never imports functions/;
// protocol/ (the agent protocol both sides share) imports only protocol/ and the standard library;
// the agent imports only agent/, protocol/, Node built-ins and small bundled packages;
// nothing in production imports local/ or tests/.
import tseslint from 'typescript-eslint';

const production = [
  'functions/**/*.ts',
  'domain/**/*.ts',
  'infra/**/*.ts',
  'agent/**/*.ts',
  'cli/**/*.ts',
  'protocol/**/*.ts',
];
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
  {
    group: ['**/infra/**', '**/functions/**'],
    message: 'domain/ imports only domain/ and protocol/ (STYLE.md rule 1).',
  },
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
    files: ['protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Only its own files (./x.js) and the standard library (node:x): no package, no folder of the service.
              regex: '^(?!\\./|node:)',
              message:
                'protocol/ is the agent protocol the agent and the service share: it imports only protocol/ and the standard library.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'protocol/ holds rules and shapes: no environment.' },
        { object: 'Date', property: 'now', message: 'protocol/ holds rules and shapes: no clock.' },
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
              // Relative paths: every folder but its own and protocol/. Packages (semver/functions/...) are bundled.
              regex: '^\\.\\./(?!protocol/)',
              message:
                'The agent ships alone to managed hosts: it imports only agent/, protocol/, Node built-ins and small packages its one file bundles.',
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
  {
    // Rooms a newcomer can live in (issue 35, docs/architecture.md): no file over 500 lines, no function over 120
    // (blank lines and comments not counted). Data (the analysis rules) and tests are exempt.
    files: ['**/*.ts', '**/*.tsx'],
    ignores: ['tests/**', 'domain/analysis/rules.ts', '**/*.generated.ts'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
);
