// What AWS calls a function's code can make, read from its bundle: esbuild bundles the function's entry as
// serverless-esbuild does (but with the AWS SDK external), tree shaking leaves the code the entry can reach, and
// every SDK command class (GetCommand, SendMessageCommand, ...) that code still names maps to an IAM action. The unit is
// what tree shaking keeps: a repository class kept in the bundle counts with every command its methods use.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** SDK command class -> IAM action. A command the code imports that is missing here fails the analysis. */
export const COMMAND_ACTIONS: Readonly<Record<string, string>> = {
  // @aws-sdk/lib-dynamodb (document client) and @aws-sdk/client-dynamodb
  GetCommand: 'dynamodb:GetItem',
  GetItemCommand: 'dynamodb:GetItem',
  PutCommand: 'dynamodb:PutItem',
  PutItemCommand: 'dynamodb:PutItem',
  UpdateCommand: 'dynamodb:UpdateItem',
  UpdateItemCommand: 'dynamodb:UpdateItem',
  DeleteCommand: 'dynamodb:DeleteItem',
  DeleteItemCommand: 'dynamodb:DeleteItem',
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
  BatchGetCommand: 'dynamodb:BatchGetItem',
  BatchGetItemCommand: 'dynamodb:BatchGetItem',
  BatchWriteCommand: 'dynamodb:BatchWriteItem',
  BatchWriteItemCommand: 'dynamodb:BatchWriteItem',
  TransactGetCommand: 'dynamodb:TransactGetItems',
  TransactGetItemsCommand: 'dynamodb:TransactGetItems',
  TransactWriteCommand: 'dynamodb:TransactWriteItems',
  TransactWriteItemsCommand: 'dynamodb:TransactWriteItems',
  DescribeTableCommand: 'dynamodb:DescribeTable',
  // @aws-sdk/client-sqs
  SendMessageCommand: 'sqs:SendMessage',
  SendMessageBatchCommand: 'sqs:SendMessage',
  GetQueueAttributesCommand: 'sqs:GetQueueAttributes',
  ReceiveMessageCommand: 'sqs:ReceiveMessage',
  DeleteMessageCommand: 'sqs:DeleteMessage',
  DeleteMessageBatchCommand: 'sqs:DeleteMessage',
  ChangeMessageVisibilityCommand: 'sqs:ChangeMessageVisibility',
  // @aws-sdk/client-apigatewaymanagementapi (the agents' WebSockets)
  PostToConnectionCommand: 'execute-api:ManageConnections',
  DeleteConnectionCommand: 'execute-api:ManageConnections',
};

/** One AWS call site kind: the module that imports the command, and the action it needs. */
export interface AwsCall {
  readonly module: string;
  readonly command: string;
  readonly action: string;
}

export interface FunctionCalls {
  /** The project's modules with code in the bundle (paths relative to the root). */
  readonly modules: readonly string[];
  readonly calls: readonly AwsCall[];
  /** The modules in the bundle that name a secondary index (`IndexName`): their queries need `<table>/index/*`. */
  readonly indexModules: readonly string[];
}

const SDK_IMPORT = /import\s*\{([^}]*)\}\s*from\s*"@aws-sdk\/[^"]+";?/g;

/**
 * The output in pieces, one per module: esbuild (not minified) starts each module's code with a `// <path>` line.
 * What tree shaking removed is not there, but the imports of an external module stay even when nothing uses them.
 */
const sectionsOf = (text: string): { module: string; code: string }[] => {
  const sections: { module: string; code: string }[] = [];
  let current: { module: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const header = /^\/\/ ((?:functions|domain|infra|agent)\/\S+\.ts)$/.exec(line);
    if (header !== null) {
      if (current !== undefined) sections.push({ module: current.module, code: current.lines.join('\n') });
      current = { module: header[1]!, lines: [] };
    } else current?.lines.push(line);
  }
  if (current !== undefined) sections.push({ module: current.module, code: current.lines.join('\n') });
  return sections;
};

/**
 * `once(factory)` (functions/shared/once.ts) only wraps a factory, so a `once(...)` value nothing uses can go with
 * what its factory would create: the id generator in functions that create nothing, the health probes outside the
 * health routes. esbuild cannot know that of an imported function; the call is marked pure for this analysis.
 */
const pureOnce: Plugin = {
  name: 'pure-once',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('node_modules')) return undefined;
      const source = await readFile(args.path, 'utf8');
      return { loader: 'ts', contents: source.replace(/(?<![\w.$])once\(/g, '/* @__PURE__ */ once(') };
    });
  },
};

/** Bundles one function entry (`functions/http/meta/router`) and lists the AWS calls its code can make. */
export const awsCallsOf = async (root: string, module: string): Promise<FunctionCalls> => {
  const result = await build({
    entryPoints: [join(root, `${module}.ts`)],
    absWorkingDir: root,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: false,
    // The cloud bundles carry the AWS SDK (serverless.yml); here it stays external so that the SDK imports left in
    // the output name the commands the code uses. The native module stays out as in the cloud.
    external: ['@aws-sdk/*', '@node-rs/argon2'],
    plugins: [pureOnce],
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]?.text;
  if (text === undefined) throw new Error(`${module}: esbuild produced no output`);
  const calls: AwsCall[] = [];
  const indexModules: string[] = [];
  const modules: string[] = [];
  const withoutSdkImports = text.replace(SDK_IMPORT, '');
  for (const { module: path, code } of sectionsOf(text)) {
    const rest = code.replace(SDK_IMPORT, '');
    if (rest.trim() !== '') modules.push(path);
    for (const match of code.matchAll(SDK_IMPORT)) {
      for (const part of (match[1] ?? '').split(',')) {
        const [imported, local = imported] = part
          .trim()
          .split(/\s+as\s+/)
          .map((name) => name.trim());
        if (imported === undefined || imported === '' || !imported.endsWith('Command')) continue;
        // Used when the name occurs in code that survived tree shaking (names are unique in a bundle).
        if (!new RegExp(`\\b${local}\\b`).test(withoutSdkImports)) continue;
        const action = COMMAND_ACTIONS[imported];
        if (action === undefined) throw new Error(`${path} uses ${imported}: add its IAM action to COMMAND_ACTIONS`);
        calls.push({ module: path, command: imported, action });
      }
    }
    if (/\bIndexName\b/.test(rest)) indexModules.push(path);
  }
  return { modules: modules.sort(), calls, indexModules };
};
