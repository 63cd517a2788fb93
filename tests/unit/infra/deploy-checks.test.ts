// The checks before packaging and deploying (infra/deploy-checks.cjs): only this checkout's osls runs the project
// (a licensed Serverless Framework v4 installed globally is refused by name), and a deploy refuses a stage whose data
// key ring does not exist.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { checkFramework, checkKeyRing } = require('../../../infra/deploy-checks.cjs') as {
  checkFramework: (serverlessPath: unknown, nodeModules?: string) => void;
  checkKeyRing: (name: string, getParameter: (name: string) => Promise<unknown>) => Promise<void>;
};
const ROOT = join(import.meta.dirname, '..', '..', '..');
const DeployChecks = require('../../../infra/deploy-checks.cjs') as new (serverless: unknown) => unknown;

let elsewhere: string;
beforeAll(async () => {
  // A framework installed somewhere else: a global licensed v4, and a global osls (not the pinned one).
  elsewhere = await mkdtemp(join(tmpdir(), 'deploy-checks-'));
  for (const [dir, name] of [
    ['serverless', 'serverless'],
    ['osls', 'osls'],
  ] as const) {
    await mkdir(join(elsewhere, dir, 'lib'), { recursive: true });
    await writeFile(join(elsewhere, dir, 'package.json'), JSON.stringify({ name, version: '4.3.1' }));
  }
});
afterAll(() => rm(elsewhere, { recursive: true, force: true }));

describe('checkFramework', () => {
  it('accepts the osls of this checkout, under either of its names', () => {
    expect(() => checkFramework(join(ROOT, 'node_modules', 'osls', 'lib'))).not.toThrow();
    expect(() => checkFramework(join(ROOT, 'node_modules', 'serverless', 'lib'))).not.toThrow();
  });

  it('refuses a globally installed framework, licensed v4 or osls, and one that does not say where it runs', () => {
    expect(() => checkFramework(join(elsewhere, 'serverless', 'lib'))).toThrow(/osls fork.*npx serverless/s);
    expect(() => checkFramework(join(elsewhere, 'osls', 'lib'))).toThrow(/this is osls at .*deploy-checks-/);
    expect(() => checkFramework(undefined)).toThrow(/this is another framework/);
  });

  it('runs as the plugin is constructed, before any command', () => {
    expect(() => new DeployChecks({ config: { serverlessPath: join(elsewhere, 'serverless', 'lib') } })).toThrow(
      /npx serverless/,
    );
    const plugin = new DeployChecks({ config: { serverlessPath: join(ROOT, 'node_modules', 'osls', 'lib') } }) as {
      hooks: Record<string, unknown>;
    };
    expect(Object.keys(plugin.hooks)).toEqual(['initialize']);
  });
});

it('looks for the key ring on `serverless deploy` only (never on package, which needs no account)', async () => {
  const asked: string[] = [];
  const serverlessFor = (commands: string[]) => ({
    config: { serverlessPath: join(ROOT, 'node_modules', 'osls', 'lib') },
    processedInput: { commands },
    service: { custom: { secretParameters: { encryptionKeys: '/deployer/x/encryption-keys' } } },
    getProvider: () => {
      asked.push(commands.join(' '));
      throw new Error('stop here');
    },
  });
  for (const commands of [['package'], ['deploy', 'function'], ['offline', 'start']]) {
    const plugin = new DeployChecks(serverlessFor(commands)) as { hooks: { initialize: () => Promise<void> } };
    await plugin.hooks.initialize();
  }
  expect(asked).toEqual([]);
  const deploy = new DeployChecks(serverlessFor(['deploy'])) as { hooks: { initialize: () => Promise<void> } };
  await expect(deploy.hooks.initialize()).rejects.toThrow('stop here');
  expect(asked).toEqual(['deploy']);
});

describe('checkKeyRing', () => {
  const NAME = '/deployer/prod/encryption-keys';

  it('lets the deploy go on when the parameter exists', async () => {
    const asked: string[] = [];
    await checkKeyRing(NAME, async (name) => void asked.push(name));
    expect(asked).toEqual([NAME]);
  });

  it('refuses a stage without its key ring, naming the parameter and the command that creates it', async () => {
    const missing = Object.assign(new Error('ParameterNotFound'), { name: 'ParameterNotFound' });
    await expect(checkKeyRing(NAME, () => Promise.reject(missing))).rejects.toThrow(
      `The data key ring ${NAME} does not exist`,
    );
    await expect(checkKeyRing(NAME, () => Promise.reject(missing))).rejects.toThrow(
      `aws ssm put-parameter --type SecureString --name ${NAME}`,
    );
  });

  it('passes any other failure on as it is (no right to read, the network)', async () => {
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    await expect(checkKeyRing(NAME, () => Promise.reject(denied))).rejects.toBe(denied);
  });
});
