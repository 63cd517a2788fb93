// What ships is what runs: one packaged function zip, unzipped alone into an empty folder (no node_modules beside
// it or above it), its handler module imported by this Node in a child process with only the function's
// environment. Every module must resolve from the zip; the import time is measured in the child.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface ZipImport {
  readonly ms?: number;
  readonly error?: string;
}

/**
 * The child: imports the handler module, answers `{ms}` or `{error}` (its code and message) as its last line. The
 * time includes the module's top-level work (the secrets bootstrap finds its values given, so it reads nothing).
 */
const CHILD = `
// The Lambda runtime's own global (not a module): response streaming's wrapper, as the runtime defines it.
globalThis.awslambda ??= { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };
const started = performance.now();
try {
  const module = await import(process.argv[1]);
  if (typeof module[process.argv[2]] !== 'function') throw new Error('no export ' + process.argv[2]);
  console.log(JSON.stringify({ ms: performance.now() - started }));
} catch (error) {
  console.log(JSON.stringify({ error: String(error.code ?? '') + ' ' + String(error.message).split('\\n')[0] }));
}
process.exit(0);
`;

/**
 * Lambda runs arm64 and the zips carry the arm64 build of native modules (@node-rs/argon2); on another machine the
 * one thing added beside the zip's own is this machine's build of that binary package (its .node file only: the
 * JavaScript that loads it is the zip's), found in `nativeFrom` (the project's node_modules).
 */
const addLocalNativeBuild = async (dir: string, nativeFrom: string): Promise<void> => {
  if (arch() === 'arm64') return;
  const scope = join(dir, 'node_modules', '@node-rs');
  const shipped = await readdir(scope).catch(() => [] as string[]);
  for (const name of shipped.filter((n) => n.endsWith('-linux-arm64-gnu'))) {
    const local = name.replace('-linux-arm64-gnu', `-linux-${arch()}-gnu`);
    await cp(join(nativeFrom, '@node-rs', local), join(scope, local), { recursive: true });
  }
};

export const importZipAlone = async (
  zipPath: string,
  handler: string, // `functions/http/meta/router.handler`
  env: Readonly<Record<string, string>>,
  nativeFrom: string,
): Promise<ZipImport> => {
  const dir = await mkdtemp(join(tmpdir(), 'deployer-zip-'));
  try {
    await promisify(execFile)('unzip', ['-q', zipPath, '-d', dir]);
    await addLocalNativeBuild(dir, nativeFrom);
    const dot = handler.lastIndexOf('.');
    const file = join(dir, `${handler.slice(0, dot)}.mjs`);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', CHILD, file, handler.slice(dot + 1)],
      { cwd: dir, env: { ...env, PATH: process.env['PATH'] ?? '' } },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ZipImport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/**
 * A function's environment as Lambda sets it, from its packaged `Environment.Variables`: CloudFormation's references
 * stand in as placeholders, each secret its parameter names is given (as infra/secrets.ts would have read it), and
 * the runtime's own variables.
 */
export const zipEnvironment = (
  functionName: string,
  variables: Readonly<Record<string, unknown>>,
): Record<string, string> => {
  const env: Record<string, string> = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'example',
    AWS_LAMBDA_FUNCTION_NAME: `deployer-ci-${functionName}`,
    NODE_ENV: 'production',
  };
  for (const [name, value] of Object.entries(variables)) {
    env[name] = typeof value === 'string' ? value : 'https://placeholder.invalid';
    if (name.endsWith('_PARAMETER'))
      env[name.replace(/_PARAMETER$/, '')] =
        name === 'PUBLIC_BASE_URL_PARAMETER'
          ? 'https://deploy.example.com'
          : `k1:${Buffer.alloc(32, 7).toString('base64')}`;
  }
  return env;
};

/** serverless's logical id prefix of a function: `notFound` -> `NotFound`. */
const logicalPrefix = (functionName: string): string => functionName.charAt(0).toUpperCase() + functionName.slice(1);

/**
 * Every function of a package folder (`serverless package --package <dir>`: its template and one zip per function),
 * each imported alone from its zip, in the template's order.
 */
export const importPackagedZips = async (
  dir: string,
  nativeFrom: string,
): Promise<{ name: string; handler: string; result: ZipImport }[]> => {
  const template = JSON.parse(await readFile(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  const zips = (await readdir(dir)).filter((f) => f.endsWith('.zip')).map((f) => f.slice(0, -'.zip'.length));
  const results = [];
  for (const name of zips) {
    const resource = template.Resources[`${logicalPrefix(name)}LambdaFunction`];
    if (resource === undefined) continue; // not a function's zip
    const variables = (resource.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    const handler = String(resource.Properties['Handler']);
    const result = await importZipAlone(join(dir, `${name}.zip`), handler, zipEnvironment(name, variables), nativeFrom);
    results.push({ name, handler, result });
  }
  return results;
};
